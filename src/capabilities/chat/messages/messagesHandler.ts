import crypto from "node:crypto";
import type { Middleware } from "koa";
import type { RequestState } from "../../../core/http/RequestState.js";
import type { RouteContext } from "../../Capability.js";
import type { ChatEngine, ChatJob } from "../ChatEngine.js";
import { toChatJob } from "../toChatJob.js";
import { visionModelIds } from "../vision/visionModels.js";
import { chatTurnHandler, type EarlyFloor } from "../turn/chatTurnHandler.js";
import { eitherTextAt, messageTextAt } from "../turn/earlyPromptFloor.js";
import { inClientTerms } from "../turn/runChatTurn.js";
import { runJob } from "../turn/runJob.js";
import { compileMessagesValidator } from "./compileMessagesValidator.js";
import { parseLargeArguments } from "../parseLargeArguments.js";
import { messageStream } from "./MessageEvents.js";
import type { CountTokensRequest, MessageCreateRequest } from "./MessagesWire.js";
import { messagesSchema } from "./messagesSchema.js";
import { toChatRequest, type MappedRequest } from "./toChatRequest.js";
import { thinkingDisplay, toReasoning } from "./toReasoning.js";
import { promptTooLong } from "./ClientFields.js";

/** The job a Messages request means, whatever the chat path throws told in the client's field names and Anthropic's words (ClientFields). */
export async function jobOf(request: MessageCreateRequest | CountTokensRequest, mapped: MappedRequest, engine: ChatEngine, state: RequestState, visionModels: readonly string[]): Promise<ChatJob> {
    const parsedArguments = await parseLargeArguments(mapped.chat.messages);
    return inClientTerms(toClient(mapped, state), () => {
        const job = {...toChatJob(mapped.chat, engine.info, parsedArguments, visionModels), reasoning: toReasoning(request.thinking, mapped.effort)};
        const topK = (request as MessageCreateRequest).top_k;
        return topK != null && topK > 0 ? {...job, sampling: {...job.sampling, topK}} : job;
    });
}

export const toClient = (mapped: MappedRequest, state: RequestState) => (error: unknown) => mapped.fields.error(error, state.toApiError);

/**
 * POST /v1/messages: Anthropic's Messages API over the chat engine. Streamed: Anthropic's events (MessageEvents); not
 * streamed, the one Message they fold to. Every error in Anthropic's shape (the route's `errorShapes`, streams included).
 */
export function messagesHandler(context: RouteContext): Middleware {
    return chatTurnHandler(context, compileMessagesValidator<MessageCreateRequest>(messagesSchema), async ({request, entry, engine, state}) => {
        state.logFields.user = request.metadata?.user_id ?? undefined;
        const mapped = toChatRequest(request);
        const job = await jobOf(request, mapped, engine, state, visionModelIds(context.engines.registry));
        const id = "msg_" + crypto.randomBytes(12).toString("hex");
        return {
            stream: request.stream === true,
            run: (hooks) => runJob(engine, job, state.signal, hooks),
            toClientError: toClient(mapped, state),
            events: messageStream({id, model: entry.id}, thinkingDisplay(request.thinking) === "omitted")
        };
    }, messagesEarlyFloor);
}

/**
 * The Messages API's prompt text (user turns, `system` as a string; not its blocks, of which systemPrompt drops Claude
 * Code's billing header) and its refusal of a prompt too long, for earlyPromptFloor.
 */
export const messagesEarlyFloor: EarlyFloor = {
    textAt: eitherTextAt(messageTextAt("messages", ["user"], "text"), (_body, path) => path.length === 1 && path[0] === "system" ? 0 : null),
    refuse: ({error}) => promptTooLong(error)
};
