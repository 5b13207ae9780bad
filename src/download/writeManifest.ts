import fs from "node:fs";
import path from "node:path";
import { loadServedManifest } from "../capabilities/loadServedManifest.js";
import { DownloadError } from "./DownloadError.js";
import type { ManifestModel } from "./manifestEntryOf.js";

export type ManifestUpdate = {added: string[], updated: string[], warnings: string[]};

type Manifest = {models: ManifestModel[]} & Record<string, unknown>;

/**
 * Merges entries into `models.json` (created when missing): an entry with the same id is replaced,
 * every other entry (the user's own) is kept as it is, in place. An alias a user's entry already
 * claims stays the user's and is dropped from the new entry, with a warning. The result is checked
 * with the server's own loadManifest before it replaces the file (write to a temp name, rename).
 * Unchanged content is not rewritten.
 */
export function writeManifest(manifestPath: string, entries: ManifestModel[]): ManifestUpdate {
    const update: ManifestUpdate = {added: [], updated: [], warnings: []};
    const existed = fs.existsSync(manifestPath);
    const manifest = existed ? readManifest(manifestPath) : {models: []};
    const models = [...manifest.models];

    for (const wanted of entries) {
        const others = models.filter((model) => model.id !== wanted.id);
        const taken = new Set(others.flatMap((model) => [model.id, ...(model.aliases ?? []), ...(model.family != null ? [`${model.family}-latest`] : [])]));
        const entry = {...wanted};
        if (entry.aliases != null) {
            const kept = entry.aliases.filter((alias) => !taken.has(alias));
            for (const alias of entry.aliases.filter((alias) => taken.has(alias)))
                update.warnings.push(`'${alias}' is already used by another model in ${manifestPath}; ${entry.id} is added without that alias.`);
            entry.aliases = kept;
        }
        const index = models.findIndex((model) => model.id === entry.id);
        if (index < 0) {
            models.push(entry);
            update.added.push(entry.id);
        } else if (JSON.stringify(models[index]) !== JSON.stringify(entry)) {
            models[index] = entry;
            update.updated.push(entry.id);
        }
    }
    if (update.added.length === 0 && update.updated.length === 0)
        return update;

    fs.mkdirSync(path.dirname(manifestPath), {recursive: true});
    const temp = path.join(path.dirname(manifestPath), `.${path.basename(manifestPath)}.${process.pid}.tmp`);
    fs.writeFileSync(temp, JSON.stringify({...manifest, models}, null, 2) + "\n");
    try {
        loadServedManifest(temp);
    } catch (error) {
        // Refuse to break a manifest that worked; one that was already broken is the user's to fix.
        const before = existed ? problemOf(manifestPath) : null;
        if (before == null) {
            fs.rmSync(temp, {force: true});
            throw new DownloadError("manifest", `Not updating ${manifestPath}: the result would not load (${(error as Error).message.replace(temp, manifestPath)}).`);
        }
        update.warnings.push(`${manifestPath} already had a problem the server will report: ${before}`);
    }
    fs.renameSync(temp, manifestPath);
    return update;
}

function readManifest(manifestPath: string): Manifest {
    let data: unknown;
    try {
        data = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
    } catch (error) {
        throw new DownloadError("manifest", `Cannot update ${manifestPath}: ${(error as Error).message}. Fix or move the file away and run again (downloaded files are kept).`);
    }
    if (data == null || typeof data !== "object" || !Array.isArray((data as Manifest).models))
        throw new DownloadError("manifest", `Cannot update ${manifestPath}: it has no "models" array. Fix or move the file away and run again (downloaded files are kept).`);
    return data as Manifest;
}

function problemOf(manifestPath: string) {
    try {
        loadServedManifest(manifestPath);
        return null;
    } catch (error) {
        return (error as Error).message;
    }
}
