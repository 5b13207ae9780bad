/** A model's waiting line is full; answered 503 with Retry-After (mapped in `server/toApiError.ts`). */
export class QueueFullError extends Error {
    constructor(readonly modelId: string, readonly queueSize: number) {
        super(`Model '${modelId}' is busy: ${queueSize} requests are already waiting. Retry later.`);
        this.name = "QueueFullError";
    }
}
