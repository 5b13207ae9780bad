import type { Context, Middleware } from "koa";
import { ApiError } from "../../../core/http/ApiError.js";
import type { RequestState } from "../../../core/http/RequestState.js";
import { compileRequestValidator } from "../../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../../Capability.js";
import type { ChatEngine } from "../ChatEngine.js";
import { chatManifestPart } from "../chatManifestPart.js";
import type { ChatSettings } from "../chatManifest.js";
import { ContextLengthExceededError } from "../errors/ContextLengthExceededError.js";
import { ImageInputError } from "../errors/ImageInputError.js";
import { TemplateRefusedError } from "../errors/TemplateRefusedError.js";
import { decisionAnswers, decisionUsage } from "./decisionAnswers.js";
import type { DecisionRequest, DecisionResponse, SystemOneRequest, SystemOneResponse } from "./DecisionsWire.js";
import { decisionsSchema, maxDecisionChoices, systemOneSchema } from "./decisionsSchema.js";
import { toDecisionJob } from "./toDecisionJob.js";
import { visionModelIds } from "../vision/visionModels.js";
import { assetOfPart, toSystemOneAnswers, toSystemOneRequest } from "./toSystemOneRequest.js";

/** POST /v1/decisions: OpenAI's Decisions API on a chat model (docs/decisions.md). */
export function decisionsHandler(context: RouteContext): Middleware {
    const validate = compileRequestValidator<DecisionRequest>(decisionsSchema);
    return async (ctx) => {
        const request = validate(ctx.request.body);
        const {response} = await decide(ctx, context, request);
        ctx.body = response;
    };
}

/** POST /v1/systemone: TypeSafe's System One format, as the /v1/decisions request it converts to. */
export function systemOneHandler(context: RouteContext): Middleware {
    const validate = compileRequestValidator<SystemOneRequest>(systemOneSchema);
    return async (ctx) => {
        const request = validate(ctx.request.body);
        const {response} = await decide(ctx, context, request, (engine) => toSystemOneRequest(request, mostOptions(engine))).catch((error: unknown) => {
            throw inSystemOneTerms(error, request);
        });
        ctx.body = {
            model: response.model,
            answers: toSystemOneAnswers(request, response.answers),
            usage: {input_tokens: response.usage.input_tokens, output_tokens: 0}
        } satisfies SystemOneResponse;
    };
}

/** The request's model (a chat model whose manifest entry does not say `decisions: false`) answers it; the request's end cancels it. */
async function decide(ctx: Context, context: RouteContext, body: {model: string}, convert?: (engine: ChatEngine) => DecisionRequest): Promise<{response: DecisionResponse}> {
    // A model its manifest keeps from decisions is refused before anything loads it.
    const named = context.engines.registry.resolve(body.model);
    if (named?.task === chatManifestPart.task && (named.settings as ChatSettings).decisions === false)
        throw notDeciding(named.id);
    const {entry, engine} = await context.engines.engineFor<ChatEngine>(body.model, chatManifestPart.task);
    (ctx.state as RequestState).logFields.model = entry.id;
    if ((entry.settings as ChatSettings).decisions === false || engine.info.decisionOptions == null || engine.info.decisionOptions < 2)
        throw notDeciding(entry.id);
    const request = convert?.(engine) ?? body as DecisionRequest;
    const job = toDecisionJob(request, mostOptions(engine), engine.info, visionModelIds(context.engines.registry));
    const state = ctx.state as RequestState;
    try {
        const outcome = await engine.decide(job, state.signal);
        state.logFields.prompt_tokens = outcome.prefixTokens + outcome.suffixTokens;
        state.logFields.completion_tokens = 0;
        return {response: {model: entry.id, answers: decisionAnswers(request.questions, outcome), usage: decisionUsage(outcome)}};
    } catch (error) {
        if (error instanceof ContextLengthExceededError)
            throw ApiError.invalidRequest(error.message, "input", "context_length_exceeded");
        // The template refused the conversation: the request's `input` (decisions have no `messages`).
        if (error instanceof TemplateRefusedError && error.param === "messages")
            throw ApiError.invalidRequest(`The model's chat template does not take this input: ${error.templateMessage}`, "input", "invalid_conversation");
        throw error;
    }
}

function notDeciding(id: string) {
    return ApiError.invalidRequest(`The model '${id}' does not answer decisions.`, "model", "model_not_supported");
}

/** The most options a question may have: the model's labels, and OpenAI's limit (System One's criteria too). */
function mostOptions(engine: ChatEngine): number {
    return Math.min(engine.info.decisionOptions ?? 0, maxDecisionChoices);
}

/**
 * An error about a part of the decisions request a System One request became, named as the client sent it: a question's
 * options (`questions[i].choices[j]...`) are its criteria (`questions.<name>.criteria`), an image of the state (a refusal
 * here, or the image's decoding in a worker) is its asset.
 */
function inSystemOneTerms(error: unknown, request: SystemOneRequest): unknown {
    const param = error instanceof ApiError ? error.param : error instanceof ImageInputError ? error.source : null;
    // A question's options (the decisions request's `questions[i].choices[j]...`) are its criteria in System One.
    const question = param == null || !(error instanceof ApiError) ? null : /^questions\[(\d+)\][.\w[\]]*/.exec(param);
    const name = question == null ? undefined : Object.keys(request.questions)[Number(question[1])];
    if (question != null && name != null) {
        const field = `questions.${name}.criteria`;
        const apiError = error as ApiError;
        return new ApiError(apiError.status, apiError.type, apiError.message.replaceAll(/questions\[\d+\][.\w[\]]*/g, field), {code: apiError.code, param: field, headers: apiError.headers});
    }
    const match = param == null ? null : /^input\[0\]\.content\[(\d+)\](\.image_url)?/.exec(param);
    const key = match == null ? undefined : assetOfPart(request, Number(match[1]));
    if (match == null || key == null)
        return error;
    const field = `assets.${key}`;
    if (error instanceof ImageInputError)
        return new ImageInputError(field, error.reason, error.message.replaceAll(match[0], field));
    const apiError = error as ApiError;
    return new ApiError(apiError.status, apiError.type, apiError.message.replaceAll(match[0], field), {code: apiError.code, param: field, headers: apiError.headers});
}
