import type { EmbeddingsResponse, EncodingFormat } from "./EmbeddingsWire.js";

/**
 * The vector as OpenAI's base64 encoding: its float32 values as little-endian bytes, base64. The
 * official clients decode it as a Float32Array, so each value must be exactly 4 bytes.
 */
export function float32ToBase64(vector: Float32Array): string {
    const bytes = Buffer.alloc(vector.length * 4);
    for (let index = 0; index < vector.length; index++)
        bytes.writeFloatLE(vector[index], index * 4);
    return bytes.toString("base64");
}

/** Inverse of float32ToBase64 (tests, benchmark). */
export function base64ToFloat32(text: string): Float32Array {
    const bytes = Buffer.from(text, "base64");
    const vector = new Float32Array(bytes.length / 4);
    for (let index = 0; index < vector.length; index++)
        vector[index] = bytes.readFloatLE(index * 4);
    return vector;
}

export function toEmbeddingsResponse(model: string, vectors: Float32Array[], promptTokens: number, format: EncodingFormat): EmbeddingsResponse {
    return {
        object: "list",
        data: vectors.map((vector, index) => ({
            object: "embedding",
            index,
            embedding: format === "base64" ? float32ToBase64(vector) : Array.from(vector)
        })),
        model,
        usage: {prompt_tokens: promptTokens, total_tokens: promptTokens}
    };
}
