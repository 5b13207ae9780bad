import type { Middleware } from "koa";
import type { EngineHost } from "../core/engines/EngineHost.js";
import type { RequestState } from "../core/http/RequestState.js";
import { compileRequestValidator } from "../core/validation/compileRequestValidator.js";
import { listModelsHandler, toModelObject } from "./modelsHandlers.js";

/** The body of POST /models/load and /models/unload, as llama-server's router mode takes it. */
type ModelRequest = {model: string};

const modelRequestSchema = {
    type: "object",
    required: ["model"],
    properties: {model: {type: "string", minLength: 1}}
};

/**
 * GET /models (any key): the body of GET /v1/models (llama-server's router mode lists its models here, `{data: [{id,
 * status: {value}}]}`), `can_manage`: whether this caller may load, unload and pull (an administrator's key, or a
 * server without keys), so a page knows which controls to offer, and `memory`: the budget and the bytes of it the
 * models hold (their estimates; /metrics' `los_memory_budget_bytes` and `los_memory_in_use_bytes`), in RAM and in VRAM.
 */
export function libraryListHandler(engines: EngineHost): Middleware {
    const list = listModelsHandler(engines);
    return async (ctx, next) => {
        await list(ctx, next);
        const role = (ctx.state as RequestState).keyRole;
        ctx.body = {
            ...ctx.body as object, can_manage: role == null || role === "admin",
            memory: memoryFigures(engines)
        };
    };
}

/**
 * The budget and the bytes of it the models hold, per device: RAM, and a GPU's VRAM (`vram_budget_bytes` null while
 * not known: `auto` before a GGUF model was estimated; 0 without a GPU).
 */
function memoryFigures(engines: EngineHost) {
    const inUse = engines.memoryInUse();
    return {budget_bytes: engines.memoryBudget, in_use_bytes: inUse.ram, vram_budget_bytes: engines.vramBudget, vram_in_use_bytes: inUse.vram};
}

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
