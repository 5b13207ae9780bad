import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Worker } from "node:worker_threads";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { describe, expect, it } from "vitest";

const fixture = new URL("../support/threads/getLlamaCountingForks.mjs", import.meta.url);
/** The prebuilt CPU binary, as the server's `--llama-build prebuilt` asks for it (runtimes/llama/llamaRuntime.ts): on Linux node-llama-cpp tests it in a child process before loading it. */
const prebuiltOnly = {
    gpu: false, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false,
    cmakeOptions: {NODE_LLAMA_CPP_PREBUILT_ONLY: "1"}, existingPrebuiltBinaryMustMatchBuildOptions: false
} as const;

type Counted = {forks: number, buildType: string};

function inWorker(options: object): Promise<Counted> {
    const worker = new Worker(fixture, {workerData: {options}});
    return new Promise((resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
    });
}

/**
 * A chat model's render thread calls getLlama again in a worker thread. Forking the server (node-llama-cpp's binary
 * test) copies the page tables of its whole heap and stalls every thread for tens to hundreds of ms on a loaded
 * server (`npm run bench:security`, the first tokenized prompt: 108-175 ms). The patch (patches/node-llama-cpp+*.patch)
 * skips the test for a binary this process has already loaded.
 */
describe.runIf(process.platform === "linux")("getLlama in a worker thread, after the process loaded the binary", () => {
    it("a fresh process tests the prebuilt binary in a child process (the fork the patch saves)", async () => {
        const {stdout} = await promisify(execFile)(process.execPath, [new URL(fixture).pathname, JSON.stringify(prebuiltOnly)]);
        expect(JSON.parse(stdout.trim().split("\n").at(-1)!)).toEqual({forks: 1, buildType: "prebuilt"});
    });

    it("does not fork the process to test it again", async () => {
        const llama = await getLlama(prebuiltOnly);
        expect(llama.buildType).toBe("prebuilt");
        expect(await inWorker(prebuiltOnly)).toEqual({forks: 0, buildType: "prebuilt"});
    });
});
