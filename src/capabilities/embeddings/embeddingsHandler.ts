import type { Middleware } from "koa";
import type { EngineHost } from "../../core/engines/EngineHost.js";
import { InputTooLongError } from "../../core/engines/EngineErrors.js";
import type { ModelRegistry } from "../../registry/ModelRegistry.js";
import { ApiError } from "../../core/http/ApiError.js";
import type { RequestState } from "../../core/http/RequestState.js";
import { compileRequestValidator } from "../../core/validation/compileRequestValidator.js";
import { resolveModelFor } from "../../core/engines/resolveModelFor.js";
import { embeddingsSchema } from "./embeddingsSchema.js";
import { toEmbeddingsResponse } from "./embeddingsResponse.js";
import type { EmbeddingsRequest } from "./EmbeddingsWire.js";
import { toEmbeddingsJob } from "./toEmbeddingsJob.js";

export type EmbeddingsDeps = {
    registry: ModelRegistry;
    engines: EngineHost;
};

/** POST /v1/embeddings: validate, resolve the model, embed every input, answer floats or base64. */
export function embeddingsHandler(deps: EmbeddingsDeps): Middleware {
    const validate = compileRequestValidator<EmbeddingsRequest>(embeddingsSchema);

    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body);
        const entry = resolveModelFor(deps.registry, request.model, "embeddings");
        const engine = deps.engines.embeddings(entry.id);
        if (engine == null)
            throw ApiError.unavailable(`Model '${entry.id}' is still loading.`, 5);
        const job = toEmbeddingsJob(request, engine.info);
        Object.assign(state.logFields, {model: entry.id, user: request.user ?? undefined, inputs: job.inputs.length});

        let result;
        try {
            result = await engine.embed(job.inputs, {dimensions: job.dimensions, signal: state.signal});
        } catch (error) {
            if (error instanceof InputTooLongError)
                throw ApiError.invalidRequest(error.message, job.params[error.inputIndex] ?? "input", "context_length_exceeded");
            throw error;
        }
        state.logFields.prompt_tokens = result.promptTokens;
        ctx.body = toEmbeddingsResponse(entry.id, result.vectors, result.promptTokens, job.encodingFormat);
    };
}
