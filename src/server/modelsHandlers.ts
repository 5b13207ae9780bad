import fs from "node:fs";
import type { Middleware } from "koa";
import type { EngineHost, ModelStatus } from "../core/engines/EngineHost.js";
import { ApiError } from "../core/http/ApiError.js";
import type { ModelEntry } from "../core/registry/ModelEntry.js";

export type ModelObject = {
    id: string;
    object: "model";
    created: number;
    owned_by: string;
    /** Extensions beyond OpenAI's shape: what the model is for and the other names it answers to. */
    task: string;
    endpoints: readonly string[];
    aliases: string[];
    family: string | null;
    /**
     * What the model takes in and gives out, where OpenRouter's `/v1/models` says it (`architecture.input_modalities`,
     * which clients read to tell a model that sees; `modality`, its older one-string form, `text+image->text`): chat
     * models, `["text", "image"]` for one that takes images.
     */
    architecture?: {modality: string, input_modalities: string[], output_modalities: string[]};
    /** Image models: `stable-diffusion` or `midjourney`, the request fields they take (the playground shows those). */
    parameter_set?: string;
    /**
     * Its place in the model library: `status.value` is `unloaded`, `loading`, `loaded`, `unloading` or `failed`
     * (llama-server's router mode reports `status.value` per model in the same place), with its estimated
     * and measured memory, last use, keep-alive, and a failed model's reason.
     */
    status: ModelStatus;
};

/** One model as `/v1/models` (and the management API) shows it. */
export function toModelObject(engines: EngineHost, entry: ModelEntry): ModelObject {
    return {
        id: entry.id,
        object: "model",
        created: createdSeconds(entry),
        owned_by: entry.ownedBy,
        task: entry.task,
        endpoints: engines.endpointsOf(entry),
        aliases: engines.registry.aliasesOf(entry),
        family: entry.family,
        ...architectureOf(engines, entry),
        ...parameterSetOf(entry),
        status: engines.statusOf(entry)
    };
}

function architectureOf(engines: EngineHost, entry: ModelEntry) {
    const modalities = engines.modalitiesOf(entry);
    return modalities == null ? {} : {architecture: {
        modality: `${modalities.input.join("+")}->${modalities.output.join("+")}`,
        input_modalities: [...modalities.input], output_modalities: [...modalities.output]
    }};
}

function parameterSetOf(entry: ModelEntry) {
    const parameterSet = (entry.settings as {parameterSet?: unknown} | null)?.parameterSet;
    return typeof parameterSet === "string" ? {parameter_set: parameterSet} : {};
}

/** GET /v1/models (and the management API's GET /models): every registered model, loaded or not, with its status in the library. */
export function listModelsHandler(engines: EngineHost): Middleware {
    return (ctx) => {
        ctx.body = {object: "list", data: engines.registry.entries.map((entry) => toModelObject(engines, entry))};
    };
}

/** GET /v1/models/:id, where the id may also be an alias; the answer carries the concrete id. */
export function retrieveModelHandler(engines: EngineHost): Middleware {
    return (ctx) => {
        const name = String(ctx.params.id);
        const entry = engines.registry.resolve(name);
        if (entry == null)
            throw ApiError.modelNotFound(name, engines.registry.names);
        ctx.body = toModelObject(engines, entry);
    };
}

/** `released` when the manifest gives it, else the file's modification time. */
function createdSeconds(entry: ModelEntry) {
    if (entry.released != null)
        return Math.floor(Date.parse(entry.released + "T00:00:00Z") / 1000);
    try {
        return Math.floor(fs.statSync(entry.path).mtimeMs / 1000);
    } catch {
        return 0;
    }
}
