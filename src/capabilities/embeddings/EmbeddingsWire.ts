/** OpenAI wire types of /v1/embeddings (kept apart from the engine types in engines/EmbeddingsEngine.ts). */
export type EmbeddingsRequest = {
    model: string;
    /** A string, an array of strings, an array of token ids or an array of token-id arrays; checked by toEmbeddingsJob. */
    input: string | unknown[];
    encoding_format?: "float" | "base64" | null;
    dimensions?: number | null;
    user?: string | null;
};

export type EncodingFormat = "float" | "base64";

export type EmbeddingObject = {
    object: "embedding";
    index: number;
    /** Floats, or with `encoding_format: "base64"` the little-endian float32 bytes in base64. */
    embedding: number[] | string;
};

export type EmbeddingsResponse = {
    object: "list";
    data: EmbeddingObject[];
    model: string;
    usage: {prompt_tokens: number, total_tokens: number};
};
