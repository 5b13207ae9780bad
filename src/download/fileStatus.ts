import fs from "node:fs";
import path from "node:path";
import type { CatalogueEntry, CatalogueFile } from "./CatalogueEntry.js";
import { hashFile } from "./hashFile.js";
import { hashSidecar } from "./hashSidecar.js";

/**
 * - `installed`: present with the right size and sha256 (from the catalogue, else as recorded).
 * - `missing`, or `partial` when a `.part` from an interrupted download is waiting to resume.
 * - `changed`: present but the size or hash is wrong; it will be downloaded again.
 * - `unverified`: present but not checked (`verify` off, or no hash known at all).
 */
export type FileStatus = {
    file: CatalogueFile;
    target: string;
    state: "installed" | "missing" | "partial" | "changed" | "unverified";
    /** Bytes already on disk in the `.part` (state `partial`). */
    partBytes: number;
};

/**
 * Whether one file of a model is in place. With `verify`, a file whose cached hash cannot be
 * trusted (no sidecar, or touched since) is hashed again; without it (`--list`) nothing is read.
 */
export async function fileStatus(modelsDir: string, entry: CatalogueEntry, file: CatalogueFile, verify: boolean): Promise<FileStatus> {
    const target = path.join(modelsDir, entry.id, ...file.path.split("/"));
    const status = (state: FileStatus["state"], partBytes = 0): FileStatus => ({file, target, state, partBytes});
    let size: number;
    try {
        size = fs.statSync(target).size;
    } catch {
        try {
            return status("partial", fs.statSync(`${target}.part`).size);
        } catch {
            return status("missing");
        }
    }
    if (file.size != null && size !== file.size)
        return status("changed");
    const recorded = hashSidecar.read(target, file.size);
    const expected = file.sha256 ?? recorded?.sha256 ?? null;
    if (expected == null)
        return status("unverified");
    if (recorded?.fresh && recorded.sha256 === expected)
        return status("installed");
    if (!verify)
        return status("unverified");
    const actual = await hashFile(target);
    if (actual !== expected)
        return status("changed");
    hashSidecar.write(target, actual);
    return status("installed");
}
