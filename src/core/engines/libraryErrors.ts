import { ApiError } from "../http/ApiError.js";

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

/** A model the whole memory budget cannot hold: no wait helps, so no Retry-After. */
export function modelTooLarge(id: string, needs: number, budget: number) {
    return new ApiError(503, "service_unavailable_error",
        `Model '${id}' needs about ${formatBytes(needs)} of memory, more than the server's whole budget of ${formatBytes(budget)} (--memory-budget).`,
        {code: "model_too_large"});
}

/** The memory a model needs is held by models that may not be evicted (busy or pinned) past the wait. */
export function memoryBusy(id: string, needs: number, free: number, budget: number, holders: readonly string[], retryAfterSeconds: number) {
    return new ApiError(503, "service_unavailable_error",
        `Model '${id}' needs about ${formatBytes(needs)} of memory; ${formatBytes(free)} of the ${formatBytes(budget)} budget is free, ` +
        `and the rest is held by ${holders.length > 0 ? holders.join(", ") : "models being loaded or unloaded"}. Retry later.`,
        {code: "model_memory_busy", headers: {"Retry-After": String(retryAfterSeconds)}});
}

/** An administrator's unload of a model that requests are using or waiting for (or that is loading): it stays. */
export function modelInUse(id: string, why: string) {
    return new ApiError(409, "invalid_request_error", `Model '${id}' ${why}: it is not unloaded. Unload it once it is idle.`,
        {code: "model_in_use", param: "model"});
}
