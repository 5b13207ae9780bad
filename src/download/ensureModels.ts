import fs from "node:fs";
import path from "node:path";
import { defaultConfig, type HubConfig } from "../config.js";
import type { CatalogueEntry } from "./CatalogueEntry.js";
import { downloadModels } from "./downloadModels.js";
import type { ProgressOutput } from "./DownloadProgress.js";
import { firstRunMessage } from "./firstRunMessage.js";
import { loadCatalogue } from "./loadCatalogue.js";

export type EnsureModelsOptions = {
    /** The manifest `npm start` will serve (absolute). */
    modelsConfig: string;
    /** `npm start -- --download`: fetch the default set into the manifest's folder first. */
    download: boolean;
    /** With `download`: install files no sha256 is known for (default: refuse them). */
    allowUnverified?: boolean;
    hub: () => HubConfig;
    out: ProgressOutput;
    /** Where the first-run message goes. */
    error: (text: string) => void;
    catalogue?: () => CatalogueEntry[];
    fetch?: typeof fetch;
};

/**
 * `npm start`'s first run. With `--download`, the default models are fetched (idempotent: nothing
 * is fetched when they are there). Without it, a missing manifest at the default path is the
 * first run, not an error: the user is told how to get models, and "demo" says "serve the demo
 * model" (models/demo, so a fresh clone serves something offline). A missing manifest at a path the
 * user chose is left to the server's own error.
 */
export async function ensureModels(options: EnsureModelsOptions): Promise<"serve" | "demo"> {
    const catalogue = options.catalogue ?? (() => loadCatalogue());
    if (options.download) {
        await downloadModels({
            catalogue: catalogue(),
            modelsDir: path.dirname(options.modelsConfig),
            manifestPath: options.modelsConfig,
            hub: options.hub(),
            out: options.out,
            fetch: options.fetch,
            allowUnverified: options.allowUnverified
        });
        return "serve";
    }
    if (fs.existsSync(options.modelsConfig) || options.modelsConfig !== path.resolve(defaultConfig.modelsConfig))
        return "serve";
    let entries: CatalogueEntry[] | null = null;
    try {
        entries = catalogue();
    } catch {
        // The message still says what to do; the catalogue test catches a broken catalogue.
    }
    options.error(firstRunMessage(options.modelsConfig, entries));
    return "demo";
}
