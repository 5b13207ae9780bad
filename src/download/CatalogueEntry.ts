import { manifestParts, type ServedTask } from "../capabilities/manifestParts.js";

/** The tasks the catalogue can have models for: those the server serves. */
export const catalogueTasks: readonly ServedTask[] = manifestParts.map((part) => part.task);

/** One file of a model, as the hub serves it at `<repo>/resolve/<revision>/<path>`. */
export type CatalogueFile = {
    /** Path inside the repo; also the path inside `<modelsDir>/<id>/`. */
    path: string;
    /** Bytes; null while unknown (then the hub's `X-Linked-Size` or the response length is used). */
    size: number | null;
    /** Lower-case hex; null while unknown (then the hub's `X-Linked-Etag` is checked and recorded). */
    sha256: string | null;
};

/** One model of `scripts/download-models/catalogue.json`, after validation. */
export type CatalogueEntry = {
    id: string;
    task: ServedTask;
    family: string;
    released: string;
    licence: string;
    /** Part of the default set (`npm run download-models` with no `--only`); one per task. */
    default: boolean;
    description: string;
    aliases: string[];
    repo: string;
    /** A pinned 40-hex commit, never a branch: the same bytes every time. */
    revision: string;
    files: CatalogueFile[];
    /** Any other key is a models.json field, copied into the entry as is (e.g. `pooling`). */
    manifest: {
        /** What models.json points at, inside the model's folder: a file, or "." for the folder. */
        path: string;
        contextSize?: number;
    } & Record<string, unknown>;
};
