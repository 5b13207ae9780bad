export class InputTooLongError extends Error {
    constructor(readonly inputIndex: number, readonly tokens: number, readonly maxInputTokens: number) {
        super(`This model's maximum input length is ${maxInputTokens} tokens, but input ${inputIndex} has ${tokens} tokens. Please shorten the input.`);
        this.name = "InputTooLongError";
    }
}
