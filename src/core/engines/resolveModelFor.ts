import type { ModelEntry, ModelTask } from "../../registry/ModelEntry.js";
import { endpointsByTask } from "../../registry/ModelEntry.js";
import type { ModelRegistry } from "../../registry/ModelRegistry.js";
import { ApiError } from "../http/ApiError.js";

/** The concrete model a request names (id, alias or `<family>-latest`), checked to serve `task`. */
export function resolveModelFor(registry: ModelRegistry, name: string, task: ModelTask): ModelEntry {
    const entry = registry.resolve(name);
    if (entry == null)
        throw ApiError.modelNotFound(name);
    if (entry.task !== task)
        throw ApiError.invalidRequest(
            `The model '${entry.id}' is a${entry.task === "embeddings" ? "n" : ""} ${entry.task} model; it serves ${endpointsByTask[entry.task].join(", ")}, not ${endpointsByTask[task].join(", ")}.`,
            "model", "model_not_supported");
    return entry;
}
