import path from "node:path";
import type { CatalogueEntry } from "./CatalogueEntry.js";
import { sizeText } from "./sizeText.js";

/**
 * What `npm start` says when there is no manifest yet: what is missing and the three ways on
 * (download the default set, download and start, or serve a folder that already has models).
 * `catalogue` null: it could not be read, so the models are not listed.
 */
export function firstRunMessage(manifestPath: string, catalogue: CatalogueEntry[] | null): string {
    const relative = path.relative(process.cwd(), manifestPath) || manifestPath;
    const defaults = catalogue?.filter((entry) => entry.default) ?? [];
    const total = sizeText(defaults.flatMap((entry) => entry.files.map((file) => file.size)));
    const width = Math.max(0, ...defaults.map((entry) => entry.id.length));
    return [
        `No models yet: ${relative} does not exist. Serving the demo model for now: stories260K (models/demo/, 1 MB, MIT),`,
        "a tiny story writer (try /v1/completions with \"Once upon a time\"), not a real assistant.",
        "",
        `To download the default models (${total === "size unknown" ? "size not known yet" : `about ${total}`}) into ${path.dirname(relative)}/:`,
        "  npm run download-models",
        ...defaults.map((entry) => `      ${entry.id.padEnd(width)}  ${entry.task.padEnd(10)}  ${sizeText(entry.files.map((file) => file.size)).padStart(12)}` +
            `${entry.aliases.length > 0 ? `  as ${entry.aliases.join(", ")}` : ""}`),
        "To download them and start in one go:",
        "  npm start -- --download",
        "To serve models you already have (a models.json and its files, e.g. a folder copied from another machine):",
        "  npm start -- --models /some/dir/models.json"
    ].join("\n");
}
