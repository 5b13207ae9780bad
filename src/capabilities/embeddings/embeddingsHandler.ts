import type { Middleware } from "koa";
import { ApiError } from "../../core/http/ApiError.js";
import type { RequestState } from "../../core/http/RequestState.js";
import { compileRequestValidator } from "../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../Capability.js";
import type { EmbeddingsEngine } from "./EmbeddingsEngine.js";
import { embeddingsSchema } from "./embeddingsSchema.js";
import { toEmbeddingsResponse } from "./embeddingsResponse.js";
import type { EmbeddingsRequest } from "./EmbeddingsWire.js";
import { InputTooLongError } from "./InputTooLongError.js";
import { toEmbeddingsJob } from "./toEmbeddingsJob.js";

/** POST /v1/embeddings: validate, resolve the model, embed every input, answer floats or base64. */
export function embeddingsHandler(context: RouteContext): Middleware {
    const validate = compileRequestValidator<EmbeddingsRequest>(embeddingsSchema);

    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body);
        const {entry, engine} = await context.engines.engineFor<EmbeddingsEngine>(request.model, "embeddings");
        const job = toEmbeddingsJob(request, engine.info);
        Object.assign(state.logFields, {model: entry.id, user: request.user ?? undefined, inputs: job.inputs.length});

        let result;
        try {
            result = await engine.embed(job.inputs, {dimensions: job.dimensions, signal: state.signal});
        } catch (error) {
            // Only the request knows how the client named input i (`input`, `input[3]`, `input[3][0]`...).
            if (error instanceof InputTooLongError)
                throw ApiError.invalidRequest(error.message, job.params[error.inputIndex] ?? "input", "context_length_exceeded");
            throw error;
        }
        state.logFields.prompt_tokens = result.promptTokens;
        ctx.body = toEmbeddingsResponse(entry.id, result.vectors, result.promptTokens, job.encodingFormat);
    };
}
