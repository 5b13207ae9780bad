import type { Middleware } from "koa";
import type { RequestState } from "../../../core/http/RequestState.js";
import type { ModelEntry } from "../../../core/registry/ModelEntry.js";
import type { RouteContext } from "../../Capability.js";
import type { ChatEngine } from "../ChatEngine.js";
import { runChatTurn, type ChatTurn, type TurnDone } from "./runChatTurn.js";

/** What a format's route knows once its request is valid and its model resolved. */
export type TurnRequest<Request> = {request: Request, entry: ModelEntry, engine: ChatEngine, state: RequestState};

/**
 * A chat-family route: validates the body (the format's schema), resolves the model (`model` and `stream` go to the
 * log line), lets the format plan the turn (`plan`: its job and pure pieces, its own log fields) and runs it (runChatTurn).
 */
export function chatTurnHandler<Request extends {model: string, stream?: boolean | null}, Done extends TurnDone>(
    context: RouteContext,
    validate: (body: unknown, state: RequestState) => Request,
    plan: (turn: TurnRequest<Request>) => ChatTurn<Done> | Promise<ChatTurn<Done>>
): Middleware {
    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body, state);
        const {entry, engine} = await context.engines.engineFor<ChatEngine>(request.model, "chat");
        Object.assign(state.logFields, {model: entry.id, stream: request.stream === true});
        await runChatTurn(ctx, context, await plan({request, entry, engine, state}));
    };
}
