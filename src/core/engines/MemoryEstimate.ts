/** The two devices a model's memory is on: the machine's RAM, and a GPU's VRAM (GGUF layers offloaded to it). */
export type MemoryDevice = "ram" | "vram";

/** Bytes per device: a model's estimate, what the models hold of the budget, the budget itself. */
export type MemoryEstimate = Readonly<Record<MemoryDevice, number>>;

export const memoryDevices: readonly MemoryDevice[] = ["ram", "vram"];

export const noMemory: MemoryEstimate = {ram: 0, vram: 0};

/**
 * A model's estimate, and what it counted that its engine must create the same: a GGUF model's context (tokens per
 * sequence; `trainContextSize`: the file's own, when it is read). The engine gets it (EngineContext.estimate), so the
 * memory reserved and the context made are one decision.
 */
export type ModelEstimate = MemoryEstimate & {
    readonly contextSize?: number, readonly trainContextSize?: number,
    /** It was fitted to the room there was (a context fitted to the budget less the pinned models): made again at each load. */
    readonly fitted?: boolean
};

/** An estimate given as one number is all RAM (a model with nothing on a GPU). */
export function memoryEstimateOf(estimate: number | ModelEstimate): ModelEstimate {
    return typeof estimate === "number" ? {ram: estimate, vram: 0} : estimate;
}
