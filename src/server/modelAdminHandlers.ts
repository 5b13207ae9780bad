import type { Middleware } from "koa";
import type { EngineHost } from "../core/engines/EngineHost.js";
import type { RequestState } from "../core/http/RequestState.js";
import { compileRequestValidator } from "../core/validation/compileRequestValidator.js";
import { toModelObject } from "./modelsHandlers.js";

/** The body of POST /models/load and /models/unload, as llama-server's router mode takes it. */
type ModelRequest = {model: string};

const modelRequestSchema = {
    type: "object",
    required: ["model"],
    properties: {model: {type: "string", minLength: 1}}
};

/**
 * POST /models/load {model} (an administrator's): loads the model now, as a request naming it would (the memory budget
 * evicts idle models or waits; a failed model is tried again at once), and answers once it is loaded:
 * `{"success": true, "model": {...the /v1/models object}}` (llama-server answers `{"success": true}`).
 */
export function loadModelHandler(engines: EngineHost): Middleware {
    const validate = compileRequestValidator<ModelRequest>(modelRequestSchema);
    return async (ctx) => {
        const state = ctx.state as RequestState;
        const {model} = validate(ctx.request.body);
        const entry = await engines.loadModel(model, state.signal);
        state.logFields.model = entry.id;
        ctx.body = {success: true, model: toModelObject(engines, entry)};
    };
}

/**
 * POST /models/unload {model} (an administrator's): unloads an idle model and answers once its memory is back; a model
 * that is not loaded is left as it is (still `success`); one that is loading or in use by requests: 409 `model_in_use`.
 */
export function unloadModelHandler(engines: EngineHost): Middleware {
    const validate = compileRequestValidator<ModelRequest>(modelRequestSchema);
    return async (ctx) => {
        const state = ctx.state as RequestState;
        const {model} = validate(ctx.request.body);
        const entry = await engines.unloadModel(model);
        state.logFields.model = entry.id;
        ctx.body = {success: true, model: toModelObject(engines, entry)};
    };
}
