import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { getLlama, LlamaLogLevel, NoBinaryFoundError, type Llama } from "node-llama-cpp";
import type { LlamaBuildSetting } from "../../config.js";
import { serverVersion } from "../../version.js";
import { describeLlamaBinary } from "./describeLlamaBinary.js";

let llamaPromise: Promise<Llama> | undefined;

/** Thrown when `--llama-build native` is asked for and `npm run build:native` has not been run. */
export class NativeBuildMissingError extends Error {}

/**
 * The process-wide llama.cpp binding (the first caller's `build` decides), always with
 * `build: "never"`: node-llama-cpp never tries to download or compile at run time (there is no
 * network on an offline machine); a missing binary is a clear error.
 *
 * - `native`: the CPU build `npm run build:native` compiled for this machine (scripts/buildNative.mjs);
 *   asked for explicitly (`gpu: false`, no prebuilt fallback), because with `gpu: "auto"` node-llama-cpp
 *   may pick a prebuilt binary over it.
 * - `prebuilt`: the binaries that come with the package, even when a native build exists.
 * - `auto`: native when it has been built, prebuilt otherwise.
 */
export function loadLlamaRuntime(build: LlamaBuildSetting = "auto"): Promise<Llama> {
    llamaPromise ??= (async () => {
        if (build === "prebuilt")
            return loadPrebuilt();
        try {
            return await getLlama({gpu: false, build: "never", usePrebuiltBinaries: false, progressLogs: false, logLevel: LlamaLogLevel.error});
        } catch (error) {
            if (!(error instanceof NoBinaryFoundError))
                throw error;
            if (build === "native")
                throw new NativeBuildMissingError("LLAMA_BUILD=native, but there is no native llama.cpp build: run `npm run build:native` first.");
            return loadPrebuilt();
        }
    })();
    return llamaPromise;
}

async function loadPrebuilt() {
    // node-llama-cpp looks for a local build before a prebuilt binary; a custom cmake option changes the
    // local build folder it looks in (so it finds none) while `existingPrebuiltBinaryMustMatchBuildOptions:
    // false` lets the prebuilt binary serve anyway.
    const llama = await getLlama({
        gpu: "auto", build: "never", logLevel: LlamaLogLevel.error,
        cmakeOptions: {NODE_LLAMA_CPP_PREBUILT_ONLY: "1"}, existingPrebuiltBinaryMustMatchBuildOptions: false
    });
    if (llama.buildType !== "prebuilt")
        throw new Error(`Asked node-llama-cpp for its prebuilt binary, got a ${llama.buildType}`);
    return llama;
}

const nodeLlamaCppVersion = readPackageVersion(fileURLToPath(import.meta.resolve("node-llama-cpp")));

/** node-llama-cpp does not export its package.json: walk up from its entry point. */
function readPackageVersion(entryFile: string): string {
    for (let dir = path.dirname(entryFile); dir !== path.dirname(dir); dir = path.dirname(dir)) {
        const file = path.join(dir, "package.json");
        if (fs.existsSync(file)) {
            const data = JSON.parse(fs.readFileSync(file, "utf8"));
            if (data.name === "node-llama-cpp")
                return String(data.version);
        }
    }
    return "unknown";
}

/** Everything about the runtime that can change generated outputs for a fixed seed. */
export function runtimeIdentity(llama: Llama) {
    return {
        serverVersion,
        nodeLlamaCppVersion,
        llamaCppRelease: `${llama.llamaCppRelease.repo}@${llama.llamaCppRelease.release}`,
        backend: llama.gpu === false ? `cpu:${llama.buildType}` : `${llama.gpu}:${llama.buildType}`,
        binary: describeLlamaBinary(llama)
    };
}
