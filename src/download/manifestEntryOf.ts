import path from "node:path";
import type { CatalogueEntry } from "./CatalogueEntry.js";

/** One `models.json` entry, exactly as the server's manifest schema accepts it. */
export type ManifestModel = {
    id: string;
    task: string;
    path: string;
    family?: string;
    released?: string;
    aliases?: string[];
    description?: string;
    contextSize?: number;
} & Record<string, unknown>;

/**
 * The manifest entry for a downloaded model: its path is `<id>/<manifest.path>` under the models
 * folder, written relative to the manifest's own folder (with `/`, so the file moves between machines).
 */
export function manifestEntryOf(entry: CatalogueEntry, modelsDir: string, manifestDir: string): ManifestModel {
    const {path: inside, ...fields} = entry.manifest;
    const target = path.join(modelsDir, entry.id, ...(inside === "." ? [] : inside.split("/")));
    const relative = path.relative(manifestDir, target).split(path.sep).join("/");
    return {
        id: entry.id,
        task: entry.task,
        path: relative === "" ? "." : relative,
        family: entry.family,
        released: entry.released,
        aliases: [...entry.aliases],
        description: entry.description,
        ...fields
    };
}
