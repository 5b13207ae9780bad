import type { CatalogueEntry } from "./CatalogueEntry.js";
import { fileStatus } from "./fileStatus.js";
import { sizeText } from "./sizeText.js";

/**
 * `--list`: every catalogue model with its size, licence, names and whether it is installed under
 * `modelsDir`. Reads no file contents (cached hashes only), so it is instant even for gigabytes.
 */
export async function listCatalogue(catalogue: CatalogueEntry[], modelsDir: string): Promise<string> {
    const latest = newestOfFamilies(catalogue);
    const rows = [["model", "task", "default", "size", "licence", "status", "names"]];
    for (const entry of catalogue) {
        const states = await Promise.all(entry.files.map(async (file) => (await fileStatus(modelsDir, entry, file, false)).state));
        rows.push([
            entry.id,
            entry.task,
            entry.default ? "yes" : "",
            sizeText(entry.files.map((file) => file.size)),
            entry.licence,
            statusText(states),
            [...entry.aliases, ...(latest.get(entry.family) === entry ? [`${entry.family}-latest`] : [])].join(", ")
        ]);
    }
    const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
    const table = rows.map((row) => row.map((cell, column) => column === row.length - 1 ? cell : cell.padEnd(widths[column])).join("  ").trimEnd());
    return `${table.join("\n")}\nModels folder: ${modelsDir}. \`npm run download-models\` fetches the default set; \`-- --only <task|model>\` picks others.\n`;
}

function statusText(states: string[]) {
    const count = (state: string) => states.filter((each) => each === state).length;
    if (count("installed") === states.length)
        return "installed";
    if (count("missing") === states.length)
        return "missing";
    if (count("installed") + count("unverified") === states.length)
        return "present, not verified";
    const present = count("installed") + count("unverified");
    return `incomplete (${present} of ${states.length} files${count("partial") > 0 ? ", resumable" : ""}${count("changed") > 0 ? ", changed" : ""})`;
}

/** As the server derives `<family>-latest`: newest `released`, ties to the later entry. */
function newestOfFamilies(catalogue: CatalogueEntry[]) {
    const newest = new Map<string, CatalogueEntry>();
    for (const entry of catalogue)
        if ((newest.get(entry.family)?.released ?? "") <= entry.released)
            newest.set(entry.family, entry);
    return newest;
}
