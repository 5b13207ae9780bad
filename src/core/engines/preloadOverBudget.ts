import { deviceWords, formatBytes } from "./libraryErrors.js";
import { memoryDevices, type MemoryEstimate } from "./MemoryEstimate.js";

/**
 * The warning, once the preload has tried every preloaded model, when their estimates together exceed a device's
 * budget (`null` for a VRAM budget not known yet): they cannot all be loaded at once, and the preload evicts none of
 * them for another, so those that found no room stay failed (tried again on their backoff, /health/ready 503). One
 * sentence per device over its budget, naming the models and the bytes; none when they fit.
 */
export function preloadOverBudget(estimates: ReadonlyMap<string, MemoryEstimate>, budget: {ram: number, vram: number | null}): string[] {
    return memoryDevices.flatMap((device) => {
        const holding = [...estimates].filter(([, estimate]) => estimate[device] > 0);
        const total = holding.reduce((sum, [, estimate]) => sum + estimate[device], 0);
        const limit = budget[device];
        if (limit == null || total <= limit)
            return [];
        const words = deviceWords[device];
        return [`The preloaded models do not fit the ${words.budget} together: ` +
            `${holding.map(([id, estimate]) => `'${id}' (${formatBytes(estimate[device])})`).join(", ")} need about ${formatBytes(total)} of ${words.memory}, ` +
            `the ${words.budget} is ${formatBytes(limit)} (${words.flag}). A preloaded model is not evicted to preload another: those that did not fit ` +
            "are tried again on their backoff and /health/ready answers 503 until they load. Raise the budget, or preload fewer models."];
    });
}
