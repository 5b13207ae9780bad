import fs from "node:fs";
import type { Middleware } from "koa";
import type { EngineHost } from "../../core/engines/EngineHost.js";
import { endpointsByTask, type ModelEntry } from "../../registry/ModelEntry.js";
import type { ModelRegistry } from "../../registry/ModelRegistry.js";
import { ApiError } from "../../core/http/ApiError.js";

export type ModelObject = {
    id: string;
    object: "model";
    created: number;
    owned_by: string;
    /** Extensions beyond OpenAI's shape: what the model is for and the other names it answers to. */
    task: string;
    endpoints: string[];
    aliases: string[];
    family: string | null;
};

export function toModelObject(registry: ModelRegistry, entry: ModelEntry): ModelObject {
    return {
        id: entry.id,
        object: "model",
        created: createdSeconds(entry),
        owned_by: entry.ownedBy,
        task: entry.task,
        endpoints: endpointsByTask[entry.task],
        aliases: registry.aliasesOf(entry),
        family: entry.family
    };
}

/** GET /v1/models: the models this server serves (not the ones of tasks it cannot serve yet). */
export function listModelsHandler(registry: ModelRegistry, engines: EngineHost): Middleware {
    return (ctx) => {
        ctx.body = {
            object: "list",
            data: registry.entries.filter((entry) => engines.serves(entry)).map((entry) => toModelObject(registry, entry))
        };
    };
}

/** GET /v1/models/:id, where the id may also be an alias; the answer carries the concrete id. */
export function retrieveModelHandler(registry: ModelRegistry, engines: EngineHost): Middleware {
    return (ctx) => {
        const name = String(ctx.params.id);
        const entry = registry.resolve(name);
        if (entry == null || !engines.serves(entry))
            throw ApiError.modelNotFound(name);
        ctx.body = toModelObject(registry, entry);
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
