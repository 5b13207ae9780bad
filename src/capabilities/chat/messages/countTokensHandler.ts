import { setImmediate } from "node:timers/promises";
import type { Middleware } from "koa";
import type { RequestState } from "../../../core/http/RequestState.js";
import type { RouteContext } from "../../Capability.js";
import type { ChatEngine } from "../ChatEngine.js";
import { inClientTerms } from "../turn/runChatTurn.js";
import { compileMessagesValidator } from "./compileMessagesValidator.js";
import { jobOf, messagesEarlyFloor, toClient } from "./messagesHandler.js";
import { refuseEarly } from "../turn/chatTurnHandler.js";
import type { CountTokensRequest } from "./MessagesWire.js";
import { countTokensSchema } from "./messagesSchema.js";
import { toChatRequest } from "./toChatRequest.js";
import { visionModelIds } from "../vision/visionModels.js";

/** POST /v1/messages/count_tokens: the prompt tokens a Messages request would take, template and tools included. */
export function countTokensHandler(context: RouteContext): Middleware {
    const validate = compileMessagesValidator<CountTokensRequest>(countTokensSchema);
    return async (ctx) => {
        const state = ctx.state as RequestState;
        refuseEarly(context, state, messagesEarlyFloor, validate);
        const request = validate(ctx.request.body);
        // As chatTurnHandler: the event loop runs between validating and the rest.
        await setImmediate();
        const {entry, engine} = await context.engines.engineFor<ChatEngine>(request.model, "chat");
        state.logFields.model = entry.id;
        const mapped = toChatRequest(request);
        const job = await jobOf(request, mapped, engine, state, visionModelIds(context.engines.registry));
        ctx.body = {input_tokens: await inClientTerms(toClient(mapped, state), () => engine.countPromptTokens(job, state.signal))};
    };
}
