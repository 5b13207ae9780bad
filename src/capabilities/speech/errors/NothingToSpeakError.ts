/**
 * An input in which the model finds nothing to say: its tokenizer gives no sound for any of its sentences (only emoji,
 * symbols, white space, or punctuation the model's vocabulary lacks). Known only in the worker, once every sentence was
 * tokenized; nothing was synthesized, so nothing was sent yet, streamed or not.
 */
export class NothingToSpeakError extends Error {
    constructor(readonly modelId: string) {
        super(`'input' has nothing to speak: the model '${modelId}' can pronounce none of it (it reads words and numbers; ` +
            "emoji, symbols and white space are not spoken).");
        this.name = "NothingToSpeakError";
    }
}
