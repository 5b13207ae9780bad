// Usage: tsx scripts/make-test-model.ts <out.gguf> [--preset tiny|bench50mb] [--no-template] [--seed N]
import {stat} from "node:fs/promises";
import {parseArgs} from "node:util";
import {bench50mbOptions, makeTestLlamaGguf, type TestLlamaGgufOptions} from "../test/support/gguf/makeTestLlamaGguf.js";

const presets: Record<string, TestLlamaGgufOptions> = {
    tiny: {},
    bench50mb: bench50mbOptions
};

const usage = "Usage: tsx scripts/make-test-model.ts <out.gguf> [--preset tiny|bench50mb] [--no-template] [--seed N]";

function fail(message: string): never {
    console.error(`${message}\n${usage}`);
    process.exit(1);
}

let parsed;
try {
    parsed = parseArgs({
        allowPositionals: true,
        options: {
            preset: {type: "string", default: "tiny"},
            "no-template": {type: "boolean", default: false},
            seed: {type: "string"},
            help: {type: "boolean", short: "h", default: false}
        }
    });
} catch (error) {
    fail(error instanceof Error ? error.message : String(error));
}

const {values, positionals} = parsed;
if (values.help) {
    console.log(usage);
    process.exit(0);
}

const [outPath] = positionals;
if (outPath == null || positionals.length !== 1)
    fail("Expected exactly one output path.");

const preset = presets[values.preset];
if (preset == null)
    fail(`Unknown preset "${values.preset}".`);

const options: TestLlamaGgufOptions = {...preset};
if (values["no-template"])
    options.chatTemplate = null;

if (values.seed != null) {
    const seed = Number(values.seed);
    if (!Number.isSafeInteger(seed))
        fail(`--seed must be an integer, got "${values.seed}".`);

    options.seed = seed;
}

const startTime = performance.now();
await makeTestLlamaGguf(outPath, options);
const elapsedMs = performance.now() - startTime;

const {size} = await stat(outPath);
console.log(`${outPath}\t${size} bytes (${(size / 1024 / 1024).toFixed(1)} MiB), written in ${elapsedMs.toFixed(0)} ms`);
