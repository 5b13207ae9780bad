import fs from "node:fs";
import path from "node:path";
import { connectionFailure } from "./connectionFailure.js";
import { DownloadError } from "./DownloadError.js";
import { errorCodeOf } from "./errorCodeOf.js";
import { formatBytes } from "./formatBytes.js";

/** A thrown error (fetch, stream or file system) as a DownloadError, plus whether resuming may help. */
export function errorForFailure(error: unknown, host: string, partFile: string, bytesMissing: number | null): {error: DownloadError, resumable: boolean} {
    if (error instanceof DownloadError)
        return {error, resumable: error.retryable};
    const code = errorCodeOf(error);
    if (code === "ENOSPC" || code === "EDQUOT") {
        const folder = path.dirname(partFile);
        const free = freeBytes(folder);
        return {resumable: false, error: new DownloadError("disk", `Disk full writing ${partFile}` +
            `${bytesMissing != null ? `: ${formatBytes(bytesMissing)} more needed` : ""}${free != null ? `, ${formatBytes(free)} free` : ""}. ` +
            "Free some space (or pass --models-dir on a bigger disk) and run again; the partial file is kept and the download resumes.")};
    }
    if (code === "EACCES" || code === "EPERM" || code === "EROFS")
        return {resumable: false, error: new DownloadError("disk", `Cannot write ${partFile} (${code}). Check the folder's permissions or pass --models-dir.`)};
    const unconnected = connectionFailure(error, host);
    if (unconnected != null)
        return {resumable: false, error: unconnected};
    // A connection cut mid-file, a reset, or our own stall timeout: the bytes so far are good.
    const reason = (error as Error)?.name === "AbortError" || (error as Error)?.name === "TimeoutError" ? "no data arrived for too long" : code ?? (error as Error)?.message ?? String(error);
    // Only a `.part` with bytes in it is worth mentioning: a connection that failed before any byte left none.
    const kept = fs.existsSync(partFile) && fs.statSync(partFile).size > 0;
    return {resumable: true, error: new DownloadError("network", `Connection to ${host} lost (${reason}). ` +
        (kept ? `The partial file ${partFile} is kept: run again to resume.` : "Nothing was written: run again when the connection is back."))};
}

function freeBytes(folder: string) {
    try {
        const stats = fs.statfsSync(folder);
        return stats.bavail * stats.bsize;
    } catch {
        return null;
    }
}
