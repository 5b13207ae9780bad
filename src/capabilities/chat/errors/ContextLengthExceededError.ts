export class ContextLengthExceededError extends Error {
    /** The count is a lower bound, from the prompt's length, not a tokenization (see PromptTokenFloor). */
    readonly atLeast: boolean;

    constructor(readonly contextSize: number, readonly promptTokens: number, options: {atLeast?: boolean} = {}) {
        super(`This model's maximum context length is ${contextSize} tokens. However, your messages resulted in ${options.atLeast === true ? "at least " : ""}${promptTokens} tokens. Please reduce the length of the messages.`);
        this.name = "ContextLengthExceededError";
        this.atLeast = options.atLeast === true;
    }
}
