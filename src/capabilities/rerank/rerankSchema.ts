/**
 * JSON schema of a rerank request. Each document's shape (a string or `{text}`) is checked by toRerankJob, which
 * names the item (`documents[3]`). Unknown fields are allowed (clients send their own, e.g. Cohere's `priority`).
 */
export const rerankSchema = {
    type: "object",
    required: ["model", "query", "documents"],
    properties: {
        model: {type: "string", minLength: 1},
        query: {type: "string"},
        documents: {type: "array", minItems: 1, maxItems: 1000},
        top_n: {type: ["integer", "null"], minimum: 1, maximum: Number.MAX_SAFE_INTEGER},
        return_documents: {type: ["boolean", "null"]},
        max_tokens_per_doc: {type: ["integer", "null"], minimum: 1, maximum: Number.MAX_SAFE_INTEGER}
    }
} as const;
