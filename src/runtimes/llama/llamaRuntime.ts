import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { getLlama, LlamaLogLevel, NoBinaryFoundError, type Llama } from "node-llama-cpp";
import type { GpuSetting, LlamaBuildSetting } from "../../settings/serverSettings.js";
import { isUsableGpu } from "./isUsableGpu.js";
import { serverVersion } from "../../version.js";
import { describeLlamaBinary } from "./describeLlamaBinary.js";

let llamaPromise: Promise<Llama> | undefined;

/** Thrown when `--llama-build native` is asked for and `npm run build:native` has not been run. */
export class NativeBuildMissingError extends Error {}

/** Thrown when `--gpu cuda|vulkan|metal` is asked for and that backend cannot run here. */
export class GpuBackendUnavailableError extends Error {}

export type LlamaRuntimeOptions = {build?: LlamaBuildSetting, gpu?: GpuSetting};

/**
 * The process-wide llama.cpp binding (the first caller's options decide), always with
 * `build: "never"`: node-llama-cpp never tries to download or compile at run time (there is no
 * network on an offline machine); a missing binary is a clear error.
 *
 * The backend (`gpu`):
 * - `off`: the CPU. `cuda`, `vulkan`, `metal`: that prebuilt backend, or an error saying it cannot run.
 * - `auto` (default): a prebuilt GPU backend only when it has a usable device (isUsableGpu: not a
 *   software rasteriser, some VRAM); otherwise the CPU.
 * On the CPU, the binary (`build`): `native` (the build `npm run build:native` compiled for this
 * machine), `prebuilt` (the package's own), or `auto` (native when built, prebuilt otherwise).
 */
export function loadLlamaRuntime(options: LlamaRuntimeOptions = {}): Promise<Llama> {
    const build = options.build ?? "auto";
    const gpu = options.gpu ?? "auto";
    llamaPromise ??= (async () => {
        if (gpu === "cuda" || gpu === "vulkan" || gpu === "metal")
            return loadGpu(gpu);
        if (gpu === "auto" && build !== "native") {
            const candidate = await getLlama({gpu: "auto", build: "never", logLevel: LlamaLogLevel.error, progressLogs: false}).catch(() => null);
            if (candidate != null && candidate.gpu !== false) {
                const devices = {names: await candidate.getGpuDeviceNames(), vramTotal: (await candidate.getVramState()).total};
                if (isUsableGpu(devices))
                    return candidate;
            }
            await candidate?.dispose();
        }
        return loadCpu(build);
    })();
    return llamaPromise;
}

async function loadGpu(gpu: "cuda" | "vulkan" | "metal") {
    try {
        return await getLlama({gpu, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false});
    } catch (error) {
        throw new GpuBackendUnavailableError(`--gpu ${gpu}: node-llama-cpp cannot run its ${gpu} backend on this machine ` +
            `(${(error as Error).message.split("\n")[0]}). Use --gpu auto or --gpu off.`);
    }
}

async function loadCpu(build: LlamaBuildSetting) {
    if (build === "prebuilt")
        return loadPrebuiltCpu();
    try {
        return await getLlama({gpu: false, build: "never", usePrebuiltBinaries: false, progressLogs: false, logLevel: LlamaLogLevel.error});
    } catch (error) {
        if (!(error instanceof NoBinaryFoundError))
            throw error;
        if (build === "native")
            throw new NativeBuildMissingError("LLAMA_BUILD=native, but there is no native llama.cpp build: run `npm run build:native` first.");
        return loadPrebuiltCpu();
    }
}

async function loadPrebuiltCpu() {
    // node-llama-cpp looks for a local build before a prebuilt binary; a custom cmake option changes the
    // local build folder it looks in (so it finds none) while `existingPrebuiltBinaryMustMatchBuildOptions:
    // false` lets the prebuilt binary serve anyway.
    const llama = await getLlama({
        gpu: false, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false,
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
