import type { ModelEntry } from "../registry/ModelEntry.js";

/**
 * A model that could not be loaded, named with its id and file, so the log says which one and where.
 * `permanent`: trying again cannot help (the model is larger than the whole memory budget).
 */
export class ModelLoadError extends Error {
    readonly permanent: boolean;

    constructor(readonly entry: ModelEntry, cause: unknown, kind: "retry" | "permanent" = "retry") {
        super(kind === "permanent" ? (cause as Error).message : `Model '${entry.id}' failed to load from ${entry.path}: ${(cause as Error)?.message ?? String(cause)}`, {cause});
        this.name = "ModelLoadError";
        this.permanent = kind === "permanent";
    }
}
