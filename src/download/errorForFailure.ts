import fs from "node:fs";
import path from "node:path";
import { DownloadError } from "./DownloadError.js";
import { formatBytes } from "./formatBytes.js";

const unreachable = new Set(["ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ENETUNREACH", "EHOSTUNREACH", "ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT"]);

/** A thrown error (fetch, stream or file system) as a DownloadError, plus whether resuming may help. */
export function errorForFailure(error: unknown, host: string, partFile: string, bytesMissing: number | null): {error: DownloadError, resumable: boolean} {
    if (error instanceof DownloadError)
        return {error, resumable: error.retryable};
    const code = codeOf(error);
    if (code === "ENOSPC" || code === "EDQUOT") {
        const folder = path.dirname(partFile);
        const free = freeBytes(folder);
        return {resumable: false, error: new DownloadError("disk", `Disk full writing ${partFile}` +
            `${bytesMissing != null ? `: ${formatBytes(bytesMissing)} more needed` : ""}${free != null ? `, ${formatBytes(free)} free` : ""}. ` +
            "Free some space (or pass --models-dir on a bigger disk) and run again; the partial file is kept and the download resumes.")};
    }
    if (code === "EACCES" || code === "EPERM" || code === "EROFS")
        return {resumable: false, error: new DownloadError("disk", `Cannot write ${partFile} (${code}). Check the folder's permissions or pass --models-dir.`)};
    // fetch refuses some ports outright (the "bad ports" of the Fetch standard), before any connection.
    if (code != null && unreachable.has(code) || messageOf((error as {cause?: unknown})?.cause) === "bad port")
        return {resumable: false, error: new DownloadError("network", `Cannot reach ${host} (${code ?? "a port fetch refuses to use"}): check the network, or set HF_ENDPOINT to a reachable mirror.`)};
    if (code != null && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code))
        return {resumable: false, error: new DownloadError("network", `Cannot verify the TLS certificate of ${host} (${code}). Behind an inspecting proxy, set NODE_EXTRA_CA_CERTS to its CA certificate.`)};
    // A connection cut mid-file, a reset, or our own stall timeout: the bytes so far are good.
    const reason = (error as Error)?.name === "AbortError" || (error as Error)?.name === "TimeoutError" ? "no data arrived for too long" : code ?? (error as Error)?.message ?? String(error);
    // Only a `.part` with bytes in it is worth mentioning: a connection that failed before any byte left none.
    const kept = fs.existsSync(partFile) && fs.statSync(partFile).size > 0;
    return {resumable: true, error: new DownloadError("network", `Connection to ${host} lost (${reason}). ` +
        (kept ? `The partial file ${partFile} is kept: run again to resume.` : "Nothing was written: run again when the connection is back."))};
}

function messageOf(error: unknown) {
    return (error as {message?: unknown})?.message;
}

function codeOf(error: unknown): string | undefined {
    const candidates = [error, (error as {cause?: unknown})?.cause, ((error as {cause?: {errors?: unknown[]}})?.cause?.errors ?? [])[0]];
    for (const candidate of candidates) {
        const code = (candidate as {code?: unknown})?.code;
        if (typeof code === "string")
            return code;
    }
    return undefined;
}

function freeBytes(folder: string) {
    try {
        const stats = fs.statfsSync(folder);
        return stats.bavail * stats.bsize;
    } catch {
        return null;
    }
}
