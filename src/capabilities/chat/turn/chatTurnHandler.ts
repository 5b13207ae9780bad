import { setImmediate } from "node:timers/promises";
import type { Middleware } from "koa";
import type { RequestState } from "../../../core/http/RequestState.js";
import type { ModelEntry } from "../../../core/registry/ModelEntry.js";
import type { RouteContext } from "../../Capability.js";
import type { ChatEngine } from "../ChatEngine.js";
import { earlyPromptFloor, type EarlyRefusal, type PromptTextAt } from "./earlyPromptFloor.js";
import { runChatTurn, type ChatTurn, type TurnDone } from "./runChatTurn.js";

/** What a format's route knows once its request is valid and its model resolved. */
export type TurnRequest<Request> = {request: Request, entry: ModelEntry, engine: ChatEngine, state: RequestState};

/**
 * Where a format's prompt text is in its body (PromptTextAt), and its refusal of a prompt too long as the format
 * words it (the engine's own error by default): for earlyPromptFloor, before the body is read.
 */
export type EarlyFloor = {textAt: PromptTextAt, refuse?: (refusal: EarlyRefusal, state: RequestState) => unknown};

/**
 * A chat-family route: refuses a body whose long prompt text cannot fit (`early`: earlyPromptFloor), validates the
 * body (the format's schema), resolves the model (`model` and `stream` go to the log line), lets the format plan the
 * turn (`plan`: its job and pure pieces, its own log fields) and runs it (runChatTurn).
 */
export function chatTurnHandler<Request extends {model: string, stream?: boolean | null}, Done extends TurnDone>(
    context: RouteContext,
    validate: (body: unknown, state: RequestState) => Request,
    plan: (turn: TurnRequest<Request>) => ChatTurn<Done> | Promise<ChatTurn<Done>>,
    early?: EarlyFloor
): Middleware {
    return async (ctx) => {
        const state = ctx.state as RequestState;
        refuseEarly(context, state, early, validate);
        const request = validate(ctx.request.body, state);
        // The event loop runs between the steps (validating, converting, the prompt floor), so that a long conversation
        // (10,000 messages: 30-70 ms of the main thread in one piece) does not hold the other requests for all of them.
        await setImmediate();
        const {entry, engine} = await context.engines.engineFor<ChatEngine>(request.model, "chat");
        Object.assign(state.logFields, {model: entry.id, stream: request.stream === true});
        const turn = await plan({request, entry, engine, state});
        await setImmediate();
        await runChatTurn(ctx, context, turn);
    };
}

/**
 * Throws the format's refusal of a prompt that earlyPromptFloor finds too long for its model (the model goes to the
 * log line, as for any request that names one). Only for a body its schema accepts (`validate`, on the body with its
 * long strings as ""): an invalid field is reported first, as for any body; one the schema refuses for a long string
 * itself, or any other, goes on to the usual path, which reports it.
 */
export function refuseEarly(context: RouteContext, state: RequestState, early: EarlyFloor | undefined, validate: (body: unknown, state: RequestState) => unknown) {
    if (early == null || state.longStrings == null)
        return;
    try {
        validate(state.longStrings.value, state);
    } catch {
        return;
    }
    const refusal = earlyPromptFloor(context.engines, state, early.textAt);
    if (refusal == null)
        return;
    state.logFields.model = refusal.model;
    throw early.refuse?.(refusal, state) ?? refusal.error;
}
