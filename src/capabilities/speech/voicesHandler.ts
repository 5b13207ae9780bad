import type { Middleware } from "koa";
import { ApiError } from "../../core/http/ApiError.js";
import type { RouteContext } from "../Capability.js";
import type { SpeechEngine } from "./SpeechEngine.js";
import { toVoicesResponse } from "./toVoicesResponse.js";

/**
 * GET /v1/audio/voices?model=...: the model's own voices and the other names each answers to.
 * `model` may be left out when exactly one speech model is served.
 */
export function voicesHandler(context: RouteContext): Middleware {
    return async (ctx) => {
        const model = ctx.query.model;
        if (Array.isArray(model))
            throw ApiError.invalidRequest("Give 'model' once.", "model");
        let name = model;
        if (name == null || name === "") {
            const speechModels = context.engines.registry.entries.filter((entry) => entry.task === "speech");
            if (speechModels.length !== 1)
                throw ApiError.invalidRequest(speechModels.length === 0
                    ? "No speech model is served."
                    : `Several speech models are served (${speechModels.map((entry) => entry.id).join(", ")}): name one with '?model='.`,
                "model", speechModels.length === 0 ? "model_not_found" : null);
            name = speechModels[0].id;
        }
        const {entry, engine} = await context.engines.engineFor<SpeechEngine>(name, "speech");
        ctx.body = toVoicesResponse(entry.id, engine);
    };
}
