// `npm run test:durations [-- count]`: the slowest test files of their last runs, as a markdown table
// (vitest writes test/.durations.json through test/support/durationsReporter.ts; docs/development.md lists them).
import { durationsFile, readDurations } from "../test/support/durationsReporter.js";

const count = Number(process.argv[2] ?? 15);
const durations = Object.entries(readDurations()).sort(([, a], [, b]) => b.totalMs - a.totalMs);
if (durations.length === 0) {
    console.error(`No durations in ${durationsFile} yet: run the tests first (npm test, or npx vitest run <files>).`);
    process.exit(1);
}
const seconds = (ms: number) => (ms / 1000).toFixed(1);
console.log("| file | s (import + tests) | s (tests and hooks) | state | run at |\n|---|---|---|---|---|");
for (const [file, {totalMs, testsMs, state, at}] of durations.slice(0, count))
    console.log(`| \`${file}\` | ${seconds(totalMs)} | ${seconds(testsMs)} | ${state} | ${at.slice(0, 16).replace("T", " ")} |`);
const total = durations.reduce((sum, [, {totalMs}]) => sum + totalMs, 0);
console.log(`\n${durations.length} files, ${seconds(total)} s together (files run in parallel: a run takes less).`);
