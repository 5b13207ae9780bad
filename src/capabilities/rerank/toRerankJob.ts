import { ApiError } from "../../core/http/ApiError.js";
import type { RerankRequest } from "./RerankWire.js";

export type RerankJob = {
    query: string;
    documents: string[];
    /** Results to return (at most the documents). */
    topN: number;
    returnDocuments: boolean;
};

/**
 * A validated request as the engine's input: each document a string or an object with a string `text` (anything
 * else: a 400 naming `documents[i]` or `documents[i].text`), `top_n` capped at the documents' count. Pure.
 */
export function toRerankJob(request: RerankRequest): RerankJob {
    const documents = request.documents.map((document, index) => {
        if (typeof document === "string")
            return document;
        if (document != null && typeof document === "object" && !Array.isArray(document)) {
            const text = (document as {text?: unknown}).text;
            if (typeof text === "string")
                return text;
            throw ApiError.invalidRequest(`'documents[${index}].text' must be a string.`, `documents[${index}].text`);
        }
        throw ApiError.invalidRequest(`'documents[${index}]' must be a string or an object with a 'text' string.`, `documents[${index}]`);
    });
    return {
        query: request.query,
        documents,
        topN: Math.min(request.top_n ?? documents.length, documents.length),
        returnDocuments: request.return_documents ?? false
    };
}
