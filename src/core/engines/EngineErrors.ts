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

/** An embeddings input with more tokens than the model accepts (inputs are never truncated). */
export class InputTooLongError extends Error {
    constructor(readonly inputIndex: number, readonly tokens: number, readonly maxInputTokens: number) {
        super(`This model's maximum input length is ${maxInputTokens} tokens, but input ${inputIndex} has ${tokens} tokens. Please shorten the input.`);
        this.name = "InputTooLongError";
    }
}

/** A response_format JSON schema that passed the server's checks but could not be turned into a grammar. */
export class InvalidJsonSchemaError extends Error {
    constructor(detail: string) {
        super(`The JSON schema in 'response_format' cannot be used: ${detail}`);
        this.name = "InvalidJsonSchemaError";
    }
}
