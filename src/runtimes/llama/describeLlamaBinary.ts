import fs from "node:fs";
import type { Llama } from "node-llama-cpp";

/**
 * Which llama.cpp binary runs, in words: `native` (built here by `npm run build:native`, for this
 * CPU) or `prebuilt`, with the CPU variant. The prebuilt CPU backend comes as one library per CPU
 * generation (libggml-cpu-haswell.so, -icelake, ...) of which ggml loads the best one the CPU can
 * run; which one it loaded is only visible in the process's memory map.
 */
export function describeLlamaBinary(llama: Llama): string {
    const kind = llama.buildType === "localBuild" ? "native" : "prebuilt";
    const gpu = llama.gpu === false ? "cpu" : llama.gpu;
    const variant = llama.buildType === "localBuild" ? "native" : loadedCpuVariant();
    return `${kind} ${gpu}${variant == null ? "" : ` (${variant})`}`;
}

function loadedCpuVariant(): string | null {
    try {
        const maps = fs.readFileSync("/proc/self/maps", "utf8");
        const match = /libggml-cpu-([\w-]+)\.(?:so|dylib|dll)/.exec(maps);
        return match?.[1] ?? null;
    } catch {
        return null;
    }
}
