import type { Middleware } from "koa";
import { compileRequestValidator } from "../../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../../Capability.js";
import { parseLargeArguments } from "../parseLargeArguments.js";
import { toChatJob } from "../toChatJob.js";
import { chatTurnHandler } from "../turn/chatTurnHandler.js";
import { inClientTerms } from "../turn/runChatTurn.js";
import { runJob } from "../turn/runJob.js";
import { responseStream } from "./ResponseEvents.js";
import { idsFor, randomId } from "./responseIds.js";
import { ResponseStore } from "./ResponseStore.js";
import type { ResponseCreateRequest } from "./ResponsesWire.js";
import { responsesSchema } from "./responsesSchema.js";
import { inputItems, toChatRequest } from "./toChatRequest.js";
import { toResponse, type OutputOptions } from "./toResponse.js";
import { toResponsesError } from "./toResponsesError.js";
import { eitherTextAt, messageTextAt } from "../turn/earlyPromptFloor.js";
import { ownerOf, previousOf, withReferencedItems } from "./storedResponseHandlers.js";
import { visionModelIds } from "../vision/visionModels.js";

/**
 * POST /v1/responses: OpenAI's Responses API over the chat engine (stateless per request; `store` keeps
 * the response for `previous_response_id` and GET). Streamed: the typed events with `sequence_number`,
 * in OpenAI's order (ResponseEvents); not streamed, the response those events fold to. Errors of the chat
 * path name the Responses fields (toResponsesError).
 */
export function createResponseHandler(context: RouteContext, store: ResponseStore): Middleware {
    const validate = compileRequestValidator<ResponseCreateRequest>(responsesSchema);
    return chatTurnHandler(context, (body, state) => {
        const request = validate(body);
        previousOf(store, request, state);
        return withReferencedItems(store, request, state);
    }, async ({request, entry, engine, state}) => {
        const owner = ownerOf(state);
        const previous = previousOf(store, request, state);
        state.logFields.user = request.user;
        const {chat, fields, tools} = toChatRequest(request, previous != null ? ResponseStore.conversationOf(previous) : []);
        const toClientError = (error: unknown) => toResponsesError(state.toApiError(error), fields, error);
        const parsedArguments = await parseLargeArguments(chat.messages);
        const job = inClientTerms(toClientError, () => toChatJob(chat, engine.info, parsedArguments, visionModelIds(context.engines.registry)));
        const id = randomId("resp");
        const createdAt = Math.floor(Date.now() / 1000);
        if (tools.warnings.length > 0)
            context.logger.warn("Built-in tools left out of the model's tools: this server runs none", {
                id: state.requestId, tools: tools.warnings.map((warning) => warning.param).join(",")
            });
        const input = inputItems(request.input).map((item) => ({...item, id: item.id ?? randomId(item.type === "function_call_output" ? "fco" : "item")}));
        const options: OutputOptions = {
            tools: tools.byName,
            encryptedReasoning: request.include?.includes("reasoning.encrypted_content") === true,
            logprobs: job.logprobs != null
        };
        const base = toResponse(id, createdAt, entry.id, request, {status: "in_progress", output: [], usage: null, warnings: tools.warnings});
        return {
            stream: request.stream === true,
            run: (hooks) => runJob(engine, job, state.signal, hooks),
            toClientError,
            // Not streamed, the body is the stream's fold (its events discarded); the finished response is stored when asked
            // (one the store cannot keep, larger than a key's share, says so: `store: false`).
            events: responseStream(base, idsFor(id), options, (response) => {
                response.store &&= store.put({response, input, previous, owner});
            })
        };
    }, {
        // `input` as one string, the text of system, developer and user messages, `instructions`; refused naming `input`.
        textAt: eitherTextAt(messageTextAt("input", ["system", "developer", "user"], "input_text", "message"),
            (_body, path) => path.length === 1 && (path[0] === "input" || path[0] === "instructions") ? 0 : null),
        refuse: ({error}, state) => toResponsesError(state.toApiError(error), {messages: [], tools: []}, error)
    });
}
