import { createHash, type Hash } from "node:crypto";
import fs from "node:fs";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { FileProgress } from "./DownloadProgress.js";
import { DownloadError } from "./DownloadError.js";
import { errorForFailure } from "./errorForFailure.js";
import { errorForResponse, type FileContext } from "./errorForResponse.js";
import { fetchFollowingRedirects } from "./fetchFollowingRedirects.js";
import { hashSidecar } from "./hashSidecar.js";

export type DownloadFileOptions = {
    url: string;
    /** Final path; bytes go to `<target>.part` until verified. */
    target: string;
    file: FileContext;
    size: number | null;
    sha256: string | null;
    token: string | null;
    label: string;
    progress: FileProgress;
    fetch?: typeof fetch;
    /** Connection cuts (or busy-hub answers) survived within one call by resuming (default 5). */
    maxResumes?: number;
    /** Wait before a resume, times the attempt number (default 1000 ms). */
    retryDelayMs?: number;
    /** Abort and resume when no byte arrived for this long (default 60 s). */
    stallTimeoutMs?: number;
    /** Install a file neither the catalogue nor the hub gives a sha256 for (default: refuse it). */
    allowUnverified?: boolean;
    /** Stops the download (the server shutting down): the `.part` is kept, and the next download of the file resumes it. */
    signal?: AbortSignal;
};

/** `verifiedBy` null: neither the catalogue nor the hub gave a sha256; the computed one is recorded. */
export type DownloadedFile = {size: number; sha256: string; verifiedBy: "catalogue" | "hub" | null};

type Fetched = {size: number, sha256: string, hubSha256: string | null, hubSize: number | null};

/**
 * Downloads one file into `<target>.part`, resuming a `.part` left by an earlier attempt with
 * `Range`, hashing while writing, and renames it to `target` only once size and sha256 check out.
 * A corrupt file is deleted and fetched once more from scratch, then it is an error; a cut
 * connection resumes (up to `maxResumes`), then the `.part` is kept for the next run.
 */
export async function downloadFile(options: DownloadFileOptions): Promise<DownloadedFile> {
    const part = `${options.target}.part`;
    let checksumRetries = 1;
    let resumes = 0;
    for (;;) {
        let fetched: Fetched;
        try {
            fetched = await fetchToPart(options, part);
        } catch (error) {
            const expected = options.size;
            const kept = fs.existsSync(part) ? fs.statSync(part).size : 0;
            if (options.signal?.aborted) {
                options.progress.stop();
                throw new DownloadError("network", `${options.label}: stopped at ${kept} of ${expected ?? "?"} bytes, as the server is shutting down. ` +
                    "What was fetched is kept (.part): the next pull of this model resumes from there, and checks the whole file's sha256 as always.");
            }
            const missing = expected == null ? null : expected - kept;
            const {error: failure, resumable} = errorForFailure(error, new URL(options.url).host, part, missing);
            if (resumable && resumes < (options.maxResumes ?? 5)) {
                resumes++;
                // The first sentence says what happened; the rest is advice for when retrying is over.
                options.progress.note(`${options.label}: ${failure.message.split(". ")[0].replace(/\.$/, "")}. Retrying (${resumes} of ${options.maxResumes ?? 5}).`);
                await new Promise((resolve) => setTimeout(resolve, (options.retryDelayMs ?? 1000) * resumes));
                continue;
            }
            options.progress.stop();
            throw failure;
        }

        const expectedSize = options.size ?? fetched.hubSize;
        const expectedSha256 = options.sha256 ?? fetched.hubSha256;
        const problem = expectedSize != null && fetched.size !== expectedSize
            ? `size ${fetched.size} bytes, expected ${expectedSize}`
            : expectedSha256 != null && fetched.sha256 !== expectedSha256
                ? `sha256 ${fetched.sha256}, expected ${expectedSha256} (from the ${options.sha256 != null ? "catalogue" : "hub"})`
                : null;
        if (problem != null) {
            // Never installed, never resumed: a corrupt prefix would poison every later attempt.
            fs.rmSync(part, {force: true});
            if (checksumRetries-- > 0) {
                options.progress.note(`${options.label}: corrupt download (${problem}); deleted, downloading again.`);
                continue;
            }
            options.progress.stop();
            throw new DownloadError("checksum", `${options.label} is corrupt after two downloads (${problem}). It was deleted; ` +
                "if this persists, the catalogue's sha256 or size may be wrong, or a proxy alters the file.");
        }

        const verifiedBy = options.sha256 != null ? "catalogue" : fetched.hubSha256 != null ? "hub" : null;
        if (verifiedBy == null && options.allowUnverified !== true) {
            fs.rmSync(part, {force: true});
            options.progress.stop();
            throw new DownloadError("checksum", `${options.label} cannot be verified: no sha256 for it is pinned in the catalogue ` +
                `(scripts/download-models/catalogue.json) and the hub announced none. It was not installed (its sha256 is ${fetched.sha256}). ` +
                "Pin the sha256 of a copy you trust in the catalogue, or run again with --allow-unverified to accept it on trust.");
        }
        syncToDisk(part);
        hashSidecar.remove(options.target);
        fs.renameSync(part, options.target);
        hashSidecar.write(options.target, fetched.sha256);
        options.progress.done(verifiedBy == null ? `sha256 ${fetched.sha256} recorded (NOT verified, accepted on trust with --allow-unverified)` : `sha256 verified (${verifiedBy})`);
        return {size: fetched.size, sha256: fetched.sha256, verifiedBy};
    }
}

/** One request: appends to (or restarts) the `.part` file; returns what is in it afterwards. */
async function fetchToPart(options: DownloadFileOptions, part: string): Promise<Fetched> {
    let offset = fs.existsSync(part) ? fs.statSync(part).size : 0;
    if (options.size != null && offset > options.size) {
        fs.rmSync(part);
        offset = 0;
    }
    const headers: Record<string, string> = {"Accept-Encoding": "identity"};
    if (options.token != null)
        headers.Authorization = `Bearer ${options.token}`;
    if (offset > 0)
        headers.Range = `bytes=${offset}-`;

    // Aborts the request when nothing arrives for stallMs (a connection that hangs without closing), or when stopped.
    const abort = new AbortController();
    if (options.signal?.aborted)
        throw options.signal.reason;
    const stop = () => abort.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", stop, {once: true});
    const stallMs = options.stallTimeoutMs ?? 60_000;
    let stall: NodeJS.Timeout | undefined;
    const watch = () => {
        clearTimeout(stall);
        stall = setTimeout(() => abort.abort(), stallMs);
    };
    watch();
    try {
        const {response, linkedSha256, linkedSize} = await fetchFollowingRedirects(options.url, headers, abort.signal, options.fetch);
        const range = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(response.headers.get("content-range") ?? "");
        if (response.status === 416) {
            // Nothing after `offset`: the `.part` is complete if it has the whole file, else start over.
            clearTimeout(stall);
            await response.body?.cancel();
            const total = options.size ?? linkedSize ?? Number(/\/(\d+)$/.exec(response.headers.get("content-range") ?? "")?.[1] ?? NaN);
            if (offset === total)
                return await hashPart(part, linkedSha256, linkedSize);
            fs.rmSync(part, {force: true});
            return await fetchToPart(options, part);
        }
        if (response.status === 206 && (range == null || Number(range[1]) !== offset)) {
            // Bytes from somewhere else than where the `.part` ends cannot be appended: start over.
            clearTimeout(stall);
            await response.body?.cancel();
            if (offset === 0)
                throw new DownloadError("http", `${options.url} answered a plain request with ${response.headers.get("content-range") ?? "a 206 without Content-Range"}.`);
            fs.rmSync(part, {force: true});
            return await fetchToPart(options, part);
        }
        if (response.status !== 200 && response.status !== 206)
            throw errorForResponse(response, options.file);
        if (response.status === 200)
            offset = 0;  // the server ignored Range (or there was none): the body is the whole file

        const hash = createHash("sha256");
        if (offset > 0) {
            clearTimeout(stall);  // re-reading gigabytes of `.part` is not the network stalling
            await hashInto(hash, part);
            watch();
        }
        else if (fs.existsSync(part) && headers.Range != null)
            options.progress.note(`${options.label}: the server does not support resuming; downloading from the start`);
        const length = Number(response.headers.get("content-length") ?? NaN);
        const total = options.size ?? linkedSize ?? (range?.[2] != null && range[2] !== "*" ? Number(range[2]) : Number.isFinite(length) ? offset + length : null);
        options.progress.start(options.label, total, offset);
        const meter = new Transform({
            transform(chunk: Buffer, _encoding, done) {
                watch();
                hash.update(chunk);
                options.progress.advance(chunk.length);
                done(null, chunk);
            }
        });
        await pipeline(Readable.fromWeb(response.body! as import("node:stream/web").ReadableStream), meter,
            fs.createWriteStream(part, {flags: offset > 0 ? "a" : "w"}));
        return {size: fs.statSync(part).size, sha256: hash.digest("hex"), hubSha256: linkedSha256, hubSize: linkedSize};
    } finally {
        clearTimeout(stall);
        options.signal?.removeEventListener("abort", stop);
    }
}

async function hashPart(part: string, hubSha256: string | null, hubSize: number | null): Promise<Fetched> {
    const hash = createHash("sha256");
    await hashInto(hash, part);
    return {size: fs.statSync(part).size, sha256: hash.digest("hex"), hubSha256, hubSize};
}

/** Feeds a file into a running hash (the bytes of a `.part` before the resumed ones). */
async function hashInto(hash: Hash, file: string) {
    for await (const chunk of fs.createReadStream(file))
        hash.update(chunk as Buffer);
}

/** The rename must not be able to land before the bytes do (a crash would leave a "good" name on garbage). */
function syncToDisk(file: string) {
    const fd = fs.openSync(file, "r+");
    try {
        fs.fsyncSync(fd);
    } finally {
        fs.closeSync(fd);
    }
}
