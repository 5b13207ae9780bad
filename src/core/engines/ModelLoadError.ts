import type { ModelEntry } from "../registry/ModelEntry.js";

/** A model that could not be loaded, named with its id and file, so the log says which one and where. */
export class ModelLoadError extends Error {
    constructor(readonly entry: ModelEntry, cause: unknown) {
        super(`Model '${entry.id}' failed to load from ${entry.path}: ${(cause as Error)?.message ?? String(cause)}`, {cause});
        this.name = "ModelLoadError";
    }
}
