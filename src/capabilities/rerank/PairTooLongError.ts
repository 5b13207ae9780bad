/** A (query, document) pair longer than the reranker takes; `documentIndex` null: the query alone is too long. */
export class PairTooLongError extends Error {
    constructor(readonly documentIndex: number | null, readonly tokens: number, readonly maxInputTokens: number) {
        super(documentIndex == null
            ? `This model's maximum input length is ${maxInputTokens} tokens, but the query alone has ${tokens} tokens. Please shorten the query.`
            : `This model's maximum input length is ${maxInputTokens} tokens, but the query with document ${documentIndex} has ${tokens} tokens. Please shorten the document.`);
        this.name = "PairTooLongError";
    }
}
