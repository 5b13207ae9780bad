import type { Llama, LlamaModel } from "node-llama-cpp";

/** Where a GGUF model runs, as /health and the startup log say it: backend, devices, VRAM, offloaded layers. */
export type GpuDescription = {backend: "cpu" | "cuda" | "vulkan" | "metal", devices: string[], vramBytes: number, offloadedLayers: number};

export async function describeGpu(llama: Llama, model: LlamaModel): Promise<GpuDescription> {
    if (llama.gpu === false)
        return {backend: "cpu", devices: [], vramBytes: 0, offloadedLayers: 0};
    return {backend: llama.gpu, devices: await llama.getGpuDeviceNames(), vramBytes: (await llama.getVramState()).total, offloadedLayers: model.gpuLayers};
}
