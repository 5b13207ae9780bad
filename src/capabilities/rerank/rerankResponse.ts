import type { RerankJob } from "./toRerankJob.js";
import type { RerankResponse } from "./RerankWire.js";

/** The engine's scores as the response: the `top_n` best documents, highest score first (ties: document order). */
export function toRerankResponse(id: string, model: string, job: RerankJob, scores: readonly number[], promptTokens: number): RerankResponse {
    const order = scores.map((_, index) => index).sort((a, b) => scores[b] - scores[a] || a - b);
    return {
        id,
        object: "list",
        model,
        results: order.slice(0, job.topN).map((index) => ({
            index,
            relevance_score: scores[index],
            ...(job.returnDocuments ? {document: {text: job.documents[index]}} : {})
        })),
        usage: {prompt_tokens: promptTokens, total_tokens: promptTokens}
    };
}
