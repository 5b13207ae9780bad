import { ApiError } from "../http/ApiError.js";

/**
 * The memory a model needs is held by models that may not be evicted for it (busy, pinned, loading): 503 with
 * Retry-After, code `model_memory_busy`. `shortfall` is the reason alone (what it needs, what is free, who holds the
 * rest), for a preloaded model whose load fails with it (ModelLoadError) and is retried by itself.
 */
export class MemoryBusyError extends ApiError {
    constructor(readonly shortfall: string, retryAfterSeconds: number) {
        super(503, "service_unavailable_error", `${shortfall} Retry later.`,
            {code: "model_memory_busy", headers: {"Retry-After": String(retryAfterSeconds)}});
    }
}
