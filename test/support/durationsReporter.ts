import fs from "node:fs";
import path from "node:path";
import type { Reporter, TestModule } from "vitest/node";

/** Where each run's per-file durations are kept (git-ignored); `npm run test:durations` prints the slowest. */
export const durationsFile = path.resolve(import.meta.dirname, "../.durations.json");

/** One test file's last run. */
export type FileDuration = {
    /** From the start of its import to the end of its last hook: what the file costs a run, in ms. */
    totalMs: number;
    /** Its tests and hooks alone, in ms. */
    testsMs: number;
    state: string;
    /** When that run ended (ISO). */
    at: string;
};

/**
 * A vitest reporter (beside the default one, see vitest.config.ts) that records how long each test file took.
 * A run of some files updates their entries and keeps the others', so the file always holds every file's last figure.
 */
export default class DurationsReporter implements Reporter {
    onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
        if (testModules.length === 0)
            return;
        const at = new Date().toISOString();
        const durations = readDurations();
        for (const module of testModules) {
            const diagnostic = module.diagnostic();
            durations[path.relative(path.dirname(path.dirname(durationsFile)), module.moduleId)] = {
                totalMs: Math.round(diagnostic.environmentSetupDuration + diagnostic.prepareDuration + diagnostic.setupDuration + diagnostic.collectDuration + diagnostic.duration),
                testsMs: Math.round(diagnostic.duration),
                state: module.state(),
                at
            };
        }
        fs.writeFileSync(durationsFile, `${JSON.stringify(durations, null, 1)}\n`);
    }
}

export function readDurations(): Record<string, FileDuration> {
    try {
        return JSON.parse(fs.readFileSync(durationsFile, "utf8")) as Record<string, FileDuration>;
    } catch {
        return {};
    }
}
