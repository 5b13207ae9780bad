/** Engine-level failures that are the client's concern; `server/toApiError.ts` maps them to HTTP. */
export class QueueFullError extends Error {
    constructor(readonly modelId: string, readonly queueSize: number) {
        super(`Model '${modelId}' is busy: ${queueSize} requests are already waiting. Retry later.`);
        this.name = "QueueFullError";
    }
}

export class ContextLengthExceededError extends Error {
    constructor(readonly contextSize: number, readonly promptTokens: number) {
        super(`This model's maximum context length is ${contextSize} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`);
        this.name = "ContextLengthExceededError";
    }
}

export class EngineDisposedError extends Error {
    constructor(modelId: string) {
        super(`Model '${modelId}' is shutting down.`);
        this.name = "EngineDisposedError";
    }
}

export class TooManyChoicesError extends Error {
    constructor(readonly modelId: string, readonly requested: number, readonly parallel: number) {
        super(`'n' is ${requested}, but model '${modelId}' is configured with ${parallel} parallel sequence${parallel === 1 ? "" : "s"}, and each choice needs its own.`);
        this.name = "TooManyChoicesError";
    }
}
