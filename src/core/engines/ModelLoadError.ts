import type { ModelEntry } from "../registry/ModelEntry.js";
import type { MemoryBusyError } from "./MemoryBusyError.js";

/**
 * A model that could not be loaded, named with its id and file, so the log says which one and where.
 * `permanent`: trying again cannot help (the model is larger than the whole memory budget). `memory`: a preloaded model
 * that could not get its memory (the cause, a MemoryBusyError, names who holds it); retried as any failure.
 */
export class ModelLoadError extends Error {
    readonly permanent: boolean;

    constructor(readonly entry: ModelEntry, cause: unknown, kind: "retry" | "permanent" | "memory" = "retry") {
        super(kind === "permanent" ? (cause as Error).message
            : kind === "memory" ? (cause as MemoryBusyError).shortfall
            : `Model '${entry.id}' failed to load from ${entry.path}: ${(cause as Error)?.message ?? String(cause)}`, {cause});
        this.name = "ModelLoadError";
        this.permanent = kind === "permanent";
    }
}
