import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { getLlama, LlamaLogLevel, type Llama } from "node-llama-cpp";
import { serverVersion } from "../../version.js";

let llamaPromise: Promise<Llama> | undefined;

/**
 * The process-wide llama.cpp binding. `build: "never"`: the prebuilt binaries that come with the
 * package are used, and a missing one is a clear error instead of an attempt to download and
 * compile llama.cpp (there is no network on an offline machine).
 */
export function loadLlamaRuntime(): Promise<Llama> {
    llamaPromise ??= getLlama({gpu: "auto", build: "never", logLevel: LlamaLogLevel.error});
    return llamaPromise;
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
        backend: llama.gpu === false ? `cpu:${llama.buildType}` : `${llama.gpu}:${llama.buildType}`
    };
}
