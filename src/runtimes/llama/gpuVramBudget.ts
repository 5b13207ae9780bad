import { defaultVramBudget, type GpuSetting, type LlamaBuildSetting } from "../../settings/serverSettings.js";

/**
 * `--vram-budget auto`: a share of the VRAM of the GPU the llama.cpp runtime uses (defaultVramBudget); 0 when the runtime runs on the CPU.
 * Asked only once a model's estimate puts bytes on a GPU, which loaded the runtime already.
 */
export async function gpuVramBudget(config: {llamaBuild: LlamaBuildSetting, gpu: GpuSetting}): Promise<number> {
    const {loadLlamaRuntime} = await import("./llamaRuntime.js");
    const llama = await loadLlamaRuntime({build: config.llamaBuild, gpu: config.gpu});
    return llama.gpu === false ? 0 : defaultVramBudget((await llama.getVramState()).total);
}
