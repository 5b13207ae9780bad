/**
 * Wire types of /v1/rerank, /rerank and /v2/rerank: the shape Jina, Cohere (v1 and v2), llama-server, vLLM and TEI's
 * rerank clients share (kept apart from the engine types in RerankEngine.ts).
 */
export type RerankRequest = {
    model: string;
    query: string;
    /** Strings, or objects with `text` (Jina, Cohere v1); checked by toRerankJob, which names the item (`documents[3]`). */
    documents: unknown[];
    /** How many results to return, best first; more than the documents = all of them. */
    top_n?: number | null;
    /** Whether each result carries its document (`{text}`); default false (Cohere, llama-server). */
    return_documents?: boolean | null;
    /** Cohere v2: accepted; a document longer than the model's input limit is refused, never truncated. */
    max_tokens_per_doc?: number | null;
};

export type RerankResult = {
    /** The document's position in the request's `documents`. */
    index: number;
    /** How relevant the document is to the query, 0 to 1 (the model's score through a sigmoid). */
    relevance_score: number;
    document?: {text: string};
};

export type RerankResponse = {
    /** A request id (Cohere's `id`). */
    id: string;
    object: "list";
    model: string;
    /** Sorted by `relevance_score`, highest first (equal scores: the earlier document first). */
    results: RerankResult[];
    /** Tokens the model read: every (query, document) pair, special tokens included. */
    usage: {prompt_tokens: number, total_tokens: number};
};
