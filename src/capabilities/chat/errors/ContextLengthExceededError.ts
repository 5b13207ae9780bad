export class ContextLengthExceededError extends Error {
    constructor(readonly contextSize: number, readonly promptTokens: number) {
        super(`This model's maximum context length is ${contextSize} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`);
        this.name = "ContextLengthExceededError";
    }
}
