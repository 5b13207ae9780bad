import type { CatalogueEntry } from "./CatalogueEntry.js";
import { DownloadError } from "./DownloadError.js";

/**
 * The models a run is about. No selector: the default set. A task (`--only embeddings`) picks
 * that task's default model, so it never pulls in every model of the task; an id or an alias
 * (`--only stories-260k`, `--only gpt-4o-mini`) picks that model, default or not.
 */
export function selectModels(catalogue: CatalogueEntry[], only: string[] = []): CatalogueEntry[] {
    if (only.length === 0)
        return catalogue.filter((entry) => entry.default);
    const picked = new Set<CatalogueEntry>();
    for (const selector of only) {
        const matches = catalogue.filter((entry) => entry.id === selector || entry.aliases.includes(selector)
            || (entry.task === selector && entry.default));
        if (matches.length === 0) {
            const tasks = [...new Set(catalogue.map((entry) => entry.task))].join(", ");
            throw new DownloadError("usage", `--only ${selector}: no such task or model. Tasks: ${tasks}. Models: ${catalogue.map((entry) => entry.id).join(", ")}.`);
        }
        matches.forEach((entry) => picked.add(entry));
    }
    // Catalogue order, whatever the order of the flags.
    return catalogue.filter((entry) => picked.has(entry));
}
