import type { Middleware } from "koa";
import { ApiError } from "../../core/http/ApiError.js";
import type { RequestState } from "../../core/http/RequestState.js";
import { compileRequestValidator } from "../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../Capability.js";
import { PairTooLongError } from "./PairTooLongError.js";
import type { RerankEngine } from "./RerankEngine.js";
import { toRerankResponse } from "./rerankResponse.js";
import { rerankSchema } from "./rerankSchema.js";
import type { RerankRequest } from "./RerankWire.js";
import { toRerankJob } from "./toRerankJob.js";

/** POST /v1/rerank (and /rerank, /v2/rerank): validate, resolve the model, score every document, answer the best `top_n`. */
export function rerankHandler(context: RouteContext): Middleware {
    const validate = compileRequestValidator<RerankRequest>(rerankSchema);

    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body);
        const job = toRerankJob(request);
        const {entry, engine} = await context.engines.engineFor<RerankEngine>(request.model, "rerank");
        Object.assign(state.logFields, {model: entry.id, documents: job.documents.length});

        let result;
        try {
            result = await engine.rank(job.query, job.documents, {signal: state.signal});
        } catch (error) {
            if (error instanceof PairTooLongError)
                throw ApiError.invalidRequest(error.message, error.documentIndex == null ? "query" : `documents[${error.documentIndex}]`, "context_length_exceeded");
            throw error;
        }
        state.logFields.prompt_tokens = result.promptTokens;
        ctx.body = toRerankResponse(state.requestId, entry.id, job, result.scores, result.promptTokens);
    };
}
