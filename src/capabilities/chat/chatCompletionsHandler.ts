import crypto from "node:crypto";
import type { Middleware } from "koa";
import { compileRequestValidator } from "../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../Capability.js";
import type { ChatCompletionRequest } from "./ChatCompletionWire.js";
import { chatCompletionEvents } from "./chatCompletionEvents.js";
import { chatCompletionSchema } from "./chatCompletionSchema.js";
import { parseLargeArguments } from "./parseLargeArguments.js";
import { toChatJob, usesDeprecatedFunctions } from "./toChatJob.js";
import { visionModelIds } from "./vision/visionModels.js";
import { chatTurnHandler } from "./turn/chatTurnHandler.js";
import { messageTextAt } from "./turn/earlyPromptFloor.js";
import { runJob } from "./turn/runJob.js";

/** POST /v1/chat/completions: the request's job, answered as its chunks or, not streamed, the one chat completion they fold to (runChatTurn). */
export function chatCompletionsHandler(context: RouteContext): Middleware {
    return chatTurnHandler(context, compileRequestValidator<ChatCompletionRequest>(chatCompletionSchema), async ({request, entry, engine, state}) => {
        const job = toChatJob(request, engine.info, await parseLargeArguments(request.messages), visionModelIds(context.engines.registry));
        const deprecatedFunctions = usesDeprecatedFunctions(request);
        Object.assign(state.logFields, {user: request.user ?? undefined, n: job.n});
        const envelope = {id: "chatcmpl-" + crypto.randomBytes(16).toString("base64url"), created: Math.floor(Date.now() / 1000), model: entry.id, systemFingerprint: engine.info.fingerprint};
        return {
            stream: request.stream === true,
            run: (hooks) => runJob(engine, job, state.signal, hooks),
            // Not streamed, the body is the stream's fold (its chunks discarded), with its usage chunk.
            events: chatCompletionEvents(envelope, job.n, {
                deprecatedFunctions, logprobs: job.logprobs != null,
                includeUsage: request.stream !== true || request.stream_options?.include_usage === true
            }),
            terminator: "[DONE]"
        };
    }, {textAt: messageTextAt("messages", ["system", "developer", "user"], "text")});
}
