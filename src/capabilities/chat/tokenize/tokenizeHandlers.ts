import type { Middleware } from "koa";
import { bodyPieces, pacedBody } from "../../../core/http/bodyPieces.js";
import { ApiError } from "../../../core/http/ApiError.js";
import type { RequestState } from "../../../core/http/RequestState.js";
import { compileRequestValidator } from "../../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../../Capability.js";
import type { ChatEngine } from "../ChatEngine.js";
import { chatManifestPart } from "../chatManifestPart.js";
import { checkTokens } from "../completions/toCompletionJobs.js";
import { toTokenizeInput } from "./toTokenizeInput.js";
import { visionModelIds } from "../vision/visionModels.js";
import type { DetokenizeRequest, DetokenizeResponse, TokenizeRequest, TokenizeResponse } from "./TokenizeWire.js";
import { detokenizeSchema, tokenizeSchema } from "./tokenizeSchema.js";

/** POST /v1/tokenize and /tokenize: a text's tokens, or a conversation's as its chat request's prompt, with their pieces on request. */
export function tokenizeHandler(context: RouteContext): Middleware {
    const validate = compileRequestValidator<TokenizeRequest>(tokenizeSchema);
    return async (ctx) => {
        const request = validate(ctx.request.body);
        const state = ctx.state as RequestState;
        const engine = await chatEngine(context, state, request.model);
        const input = await toTokenizeInput(request, engine.info, visionModelIds(context.engines.registry));
        const tokenized = await engine.tokenize(input, {withPieces: request.with_pieces === true, signal: state.signal});
        if ("json" in tokenized) {
            // A long list, written off the main thread: the same bytes JSON.stringify would give, written a piece at a time.
            ctx.type = "application/json";
            ctx.body = pacedBody([
                Buffer.from(`{"tokens":`),
                ...bodyPieces(Buffer.from(tokenized.json.buffer, tokenized.json.byteOffset, tokenized.json.byteLength)),
                Buffer.from(`,"count":${tokenized.count},"max_model_len":${engine.info.contextSize}}`)
            ]);
            return;
        }
        const {tokens, pieces} = tokenized;
        ctx.body = {
            tokens: pieces == null ? tokens : tokens.map((id, index) => ({id, piece: pieces[index]})),
            count: tokens.length,
            max_model_len: engine.info.contextSize
        } satisfies TokenizeResponse;
    };
}

/** POST /v1/detokenize and /detokenize: the text of token ids of the model's vocabulary. */
export function detokenizeHandler(context: RouteContext): Middleware {
    const validate = compileRequestValidator<DetokenizeRequest>(detokenizeSchema);
    return async (ctx) => {
        const request = validate(ctx.request.body);
        const engine = await chatEngine(context, ctx.state as RequestState, request.model);
        checkTokens(request.tokens, "tokens", engine.info.vocabularySize);
        const text = await engine.detokenize(request.tokens as number[]);
        ctx.body = {content: text, prompt: text} satisfies DetokenizeResponse;
    };
}

/**
 * The chat model a request names, loaded on demand like a chat request's; without `model` (llama-server's tooling
 * sends none), the one chat model the server serves, or a 400 asking for it when there are several.
 */
async function chatEngine(context: RouteContext, state: RequestState, model: string | undefined): Promise<ChatEngine> {
    const task = chatManifestPart.task;
    let name = model;
    if (name == null) {
        const served = context.engines.registry.entries.filter((entry) => entry.task === task);
        if (served.length !== 1)
            throw ApiError.invalidRequest(`Missing required parameter: 'model' (this server serves ${served.length} chat models; name one).`, "model");
        name = served[0].id;
    }
    const {entry, engine} = await context.engines.engineFor<ChatEngine>(name, task);
    state.logFields.model = entry.id;
    return engine;
}
