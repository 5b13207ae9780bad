import fs from "node:fs";
import path from "node:path";
import type { HubConfig } from "../config.js";
import type { CatalogueEntry } from "./CatalogueEntry.js";
import { downloadFile } from "./downloadFile.js";
import { DownloadError } from "./DownloadError.js";
import { DownloadProgress, type FileProgress, type ProgressOutput } from "./DownloadProgress.js";
import { fileStatus, type FileStatus } from "./fileStatus.js";
import { formatBytes } from "./formatBytes.js";
import { sizeText } from "./sizeText.js";
import { hubUrl } from "./hubUrl.js";
import { manifestEntryOf } from "./manifestEntryOf.js";
import { selectModels } from "./selectModels.js";
import { writeManifest } from "./writeManifest.js";

export type DownloadModelsOptions = {
    catalogue: CatalogueEntry[];
    modelsDir: string;
    manifestPath: string;
    /** `--only` selectors (task, id or alias); empty = the default set. */
    only?: string[];
    dryRun?: boolean;
    hub: HubConfig;
    out: ProgressOutput;
    /** Each file's progress; default: drawn on `out` (DownloadProgress). */
    progress?: FileProgress;
    fetch?: typeof fetch;
    /** Free bytes where models go (tests pretend a full disk); default: statfs. */
    freeBytes?: (dir: string) => number | null;
    retryDelayMs?: number;
    stallTimeoutMs?: number;
    /** Install files no sha256 is known for (the catalogue pins none, the hub announces none); default: refuse them. */
    allowUnverified?: boolean;
    /** Stops the run (the server shutting down): a file under way keeps its `.part` for the next run to resume. */
    signal?: AbortSignal;
};

export type DownloadSummary = {models: string[], downloadedFiles: number, downloadedBytes: number, presentFiles: number};

/**
 * `npm run download-models`: the selected models' missing files are downloaded (verified,
 * installed atomically), then each complete model is merged into the manifest. A model that fails
 * (gated, not found, corrupt) does not stop the others; a network or disk failure stops the run.
 * Throws a DownloadError naming every failure once the rest is done.
 */
export async function downloadModels(options: DownloadModelsOptions): Promise<DownloadSummary> {
    const say = (line: string) => options.out.write(`${line}\n`);
    const models = selectModels(options.catalogue, options.only);
    const plan = new Map<CatalogueEntry, FileStatus[]>();
    for (const model of models)
        plan.set(model, await Promise.all(model.files.map((file) => fileStatus(options.modelsDir, model, file, true))));
    const todo = [...plan.values()].flat().filter((status) => status.state !== "installed");
    const presentFiles = [...plan.values()].flat().length - todo.length;
    const summary: DownloadSummary = {models: models.map((model) => model.id), downloadedFiles: 0, downloadedBytes: 0, presentFiles};
    const remaining = todo.reduce((sum, status) => sum + (status.file.size ?? 0) - status.partBytes, 0);
    const todoSize = sizeText(todo.map((status) => status.file.size == null ? null : status.file.size - status.partBytes));

    if (options.dryRun) {
        for (const [model, statuses] of plan) {
            say(`${model.id} (${model.task}, ${model.licence}) from ${model.repo} at ${model.revision.slice(0, 12)}`);
            for (const status of statuses)
                say(`  ${status.state === "installed" ? "present      " : "would fetch  "}${status.file.path} (${status.file.size == null ? "size unknown" : formatBytes(status.file.size)})`);
        }
        say(todo.length === 0 ? `All ${presentFiles} files already present; nothing to download.`
            : `Dry run: would download ${files(todo.length)}, ${todoSize}; ${presentFiles} already present. Nothing was written.`);
        return summary;
    }
    const placeholders = models.filter((model) => /^0+$/.test(model.revision) && plan.get(model)!.some((status) => status.state !== "installed"));
    if (placeholders.length > 0)
        throw new DownloadError("catalogue", `The catalogue has no pinned revision yet for ${placeholders.map((model) => model.id).join(", ")} ` +
            "(all zeros is a placeholder): fill in the real commit in scripts/download-models/catalogue.json, or pick other models with `npm run download-models -- --only <model>`.");
    if (todo.length === 0)
        say(`All ${presentFiles} files already present; nothing to download.`);
    else {
        fs.mkdirSync(options.modelsDir, {recursive: true});
        const free = (options.freeBytes ?? statfsFree)(options.modelsDir);
        if (free != null && remaining > free)
            throw new DownloadError("disk", `Not enough disk space in ${options.modelsDir}: ${formatBytes(remaining)} needed, ${formatBytes(free)} free. ` +
                "Free some space or pass --models-dir on a bigger disk.");
        // Each model's licence before any byte is fetched (as --list and --dry-run show it).
        for (const [model, statuses] of plan)
            if (statuses.some((status) => status.state !== "installed"))
                say(`${model.id} (${model.task}): licence ${model.licence}, from ${model.repo} at ${model.revision.slice(0, 12)}`);
        say(`Downloading ${files(todo.length)}, ${todoSize}, into ${options.modelsDir}${presentFiles > 0 ? ` (${presentFiles} already present)` : ""}.`);
    }

    const failures: DownloadError[] = [];
    const unpinned: string[] = [];
    const progress = options.progress ?? new DownloadProgress(options.out);
    const started = performance.now();
    for (const [model, statuses] of plan) {
        // Folders this run creates; a model that fails takes them away again when they stayed empty.
        const created: {deepest: string, first: string}[] = [];
        try {
            for (const status of statuses.filter((status) => status.state !== "installed")) {
                const first = fs.mkdirSync(path.dirname(status.target), {recursive: true});
                if (first != null)
                    created.push({deepest: path.dirname(status.target), first});
                const result = await downloadFile({
                    url: hubUrl(options.hub.hfEndpoint, model.repo, model.revision, status.file.path),
                    target: status.target,
                    file: {endpoint: options.hub.hfEndpoint, repo: model.repo, revision: model.revision, path: status.file.path, tokenSet: options.hub.hfToken != null},
                    size: status.file.size,
                    sha256: status.file.sha256,
                    token: options.hub.hfToken,
                    label: `${model.id}/${status.file.path}`,
                    progress,
                    fetch: options.fetch,
                    retryDelayMs: options.retryDelayMs,
                    stallTimeoutMs: options.stallTimeoutMs,
                    allowUnverified: options.allowUnverified,
                    signal: options.signal
                });
                summary.downloadedFiles++;
                summary.downloadedBytes += result.size;
                if (status.file.sha256 == null || status.file.size == null)
                    unpinned.push(`  ${model.id} ${status.file.path}: "size": ${result.size}, "sha256": "${result.sha256}"${result.verifiedBy == null ? " (not verified)" : ""}`);
            }
        } catch (error) {
            removeEmptyFolders(created);
            // Models finished before this one are already in the manifest; the rest would fail alike.
            if (!(error instanceof DownloadError) || error.fatal)
                throw error;
            // Said once, by whoever prints the error thrown at the end (it lists every failure).
            failures.push(error);
            continue;
        }
        updateManifest(options, [model], say);
    }

    if (summary.downloadedFiles > 0)
        say(`Downloaded ${files(summary.downloadedFiles)}, ${formatBytes(summary.downloadedBytes)}, in ${((performance.now() - started) / 1000).toFixed(1)}s.`);
    if (unpinned.length > 0)
        say(`Not pinned in the catalogue yet (recorded in the files' .sha256 sidecars; add them to the catalogue):\n${unpinned.join("\n")}`);
    if (failures.length > 0)
        throw new DownloadError(failures[0].kind, failures.length === 1 ? failures[0].message : `${failures.length} models failed:\n${failures.map((failure) => `- ${failure.message}`).join("\n")}`);
    return summary;
}

function updateManifest(options: DownloadModelsOptions, models: CatalogueEntry[], say: (line: string) => void) {
    if (models.length === 0)
        return;
    const manifestDir = path.dirname(path.resolve(options.manifestPath));
    const update = writeManifest(options.manifestPath, models.map((model) => manifestEntryOf(model, options.modelsDir, manifestDir)));
    update.warnings.forEach((warning) => say(`warning: ${warning}`));
    if (update.added.length > 0 || update.updated.length > 0)
        say(`${options.manifestPath}: ${[...update.added.map((id) => `added ${id}`), ...update.updated.map((id) => `updated ${id}`)].join(", ")}`);
}

/** The folders mkdir created (from `first` down to `deepest`), deepest first, where they are empty. */
function removeEmptyFolders(created: {deepest: string, first: string}[]) {
    const folders = new Set<string>();
    for (const {deepest, first} of created)
        for (let at = deepest; at.length >= first.length; at = path.dirname(at))
            folders.add(at);
    for (const folder of [...folders].sort((a, b) => b.length - a.length)) {
        try {
            if (fs.readdirSync(folder).length === 0)
                fs.rmdirSync(folder);
        } catch {
            // Gone already, or not ours to remove.
        }
    }
}

function files(count: number) {
    return count === 1 ? "1 file" : `${count} files`;
}

function statfsFree(dir: string) {
    try {
        const stats = fs.statfsSync(dir);
        return stats.bavail * stats.bsize;
    } catch {
        return null;
    }
}
