import { ApiError } from "../http/ApiError.js";
import { MemoryBusyError } from "./MemoryBusyError.js";
import type { MemoryDevice } from "./MemoryEstimate.js";

/** Bytes as a person reads them: MB below a GB, GB with two decimals above. */
export function formatBytes(bytes: number): string {
    return bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(2)} GB` : `${Math.round(bytes / 1024 ** 2)} MB`;
}

/** A model that failed to load: the reason, and when a request will try again. */
export function modelLoadFailed(message: string, retryAfterSeconds: number) {
    return new ApiError(503, "service_unavailable_error", `${message.replace(/\.?$/, ".")} It will be loaded again by a request after ${retryAfterSeconds} s.`, {
        code: "model_load_failed",
        headers: {"Retry-After": String(retryAfterSeconds)}
    });
}

/** How errors name a device's memory, and the flag of its budget. */
export const deviceWords: Record<MemoryDevice, {memory: string, budget: string, flag: string}> = {
    ram: {memory: "memory", budget: "budget", flag: "--memory-budget"},
    vram: {memory: "GPU memory (VRAM)", budget: "VRAM budget", flag: "--vram-budget"}
};

/**
 * A model the whole memory budget of a device cannot hold: no wait helps, so no Retry-After, and `x-should-retry:
 * false`, which the openai and Anthropic SDKs obey (they retry any 5xx otherwise: three requests for one answer).
 */
export function modelTooLarge(id: string, device: MemoryDevice, needs: number, budget: number, hint?: string) {
    const words = deviceWords[device];
    return new ApiError(503, "service_unavailable_error",
        `Model '${id}' needs about ${formatBytes(needs)} of ${words.memory}, more than the server's whole ${words.budget} of ${formatBytes(budget)} (${words.flag}).` +
        (hint == null ? "" : ` ${hint}`),
        {code: "model_too_large", headers: {"x-should-retry": "false"}});
}

/**
 * The memory a model needs on a device is held by models that may not be evicted for it: past the wait for busy ones,
 * or at once when `never` (evicting every model that may ever be evicted for it would not free enough: the rest is
 * pinned, or preloaded and this is a preload).
 */
export function memoryBusy(id: string, device: MemoryDevice, needs: number, free: number, budget: number, holders: readonly string[], retryAfterSeconds: number, never = false) {
    const words = deviceWords[device];
    return new MemoryBusyError(
        `Model '${id}' needs about ${formatBytes(needs)} of ${words.memory}; ${formatBytes(free)} of the ${formatBytes(budget)} ${words.budget} is free, ` +
        `and the rest is held by ${holders.length > 0 ? holders.join(", ") : "models being loaded or unloaded"}` +
        (never ? "; evicting every model that may be evicted for it would not free enough." : "."),
        retryAfterSeconds);
}

/** An administrator's unload of a model that requests are using or waiting for (or that is loading): it stays. */
export function modelInUse(id: string, why: string) {
    return new ApiError(409, "invalid_request_error", `Model '${id}' ${why}: it is not unloaded. Unload it once it is idle.`,
        {code: "model_in_use", param: "model"});
}
