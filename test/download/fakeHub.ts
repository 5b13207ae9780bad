import fs from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/** A file the fake hub serves at `/<repo>/resolve/<revision>/<path>`. */
export type HubFile = {repo: string, revision: string, path: string, content: Buffer};

export type HubRequest = {server: "hub" | "cdn", path: string, file: string | null, range: string | null, authorization: string | null, status: number, bytesSent: number};

/** Per-file behaviour, keyed by the file's path; everything off by default. */
export type HubSwitches = {
    /** Send the file's sha256 as `X-Linked-Etag` (as the hub does for LFS files). */
    linkedEtag: boolean;
    /** Answer `resolve` with a 302 to a second server on another port (the hub's CDN). */
    redirectToCdn: boolean;
    /** Redirect the hub's answers here instead of to the CDN (redirect-scheme tests). */
    redirectLocation?: string;
    /** Honour `Range: bytes=N-` with 206 (or 416); off: always 200 with the whole file. */
    range: boolean;
    /** Destroy the socket after this many body bytes, for the next `cutTimes` content requests. */
    cutAfter: Record<string, number>;
    cutTimes: Record<string, number>;
    /** Send this many body bytes, then nothing more without closing (once), as a hung connection does. */
    hangAfter: Record<string, number>;
    /** Serve flipped bytes for the next N content requests of the file. */
    corruptTimes: Record<string, number>;
    /** Answer with this status (and `X-Error-Code`) instead of the file. */
    fail: Record<string, {status: number, code?: string, message?: string}>;
    /** Repos that need `Authorization: Bearer <token>`: 401 without one, 403 with another. */
    gated: Record<string, string>;
};

/** Random bytes, for fixtures: `size` of them, and their sha256. */
export function fixture(size: number) {
    const content = randomBytes(size);
    return {content, sha256: createHash("sha256").update(content).digest("hex")};
}

/**
 * A stand-in for huggingface.co on 127.0.0.1, with the behaviours the downloader must survive.
 * Every request is logged (with the bytes of body sent) so tests can count and inspect them.
 */
export class FakeHub {
    readonly requests: HubRequest[] = [];
    /** The hub's `pipeline_tag` per repository (its API). */
    pipelineTags: Record<string, string> = {};
    switches: HubSwitches = {linkedEtag: true, redirectToCdn: true, range: true, cutAfter: {}, cutTimes: {}, hangAfter: {}, corruptTimes: {}, fail: {}, gated: {}};
    url = "";
    private cdnUrl = "";
    private readonly hub = http.createServer((req, res) => this.handle("hub", req, res));
    private readonly cdn = http.createServer((req, res) => this.handle("cdn", req, res));

    /**
     * Where the client keeps a file's partial download: a cut connection is dropped only once the client
     * has stored every byte sent before the cut, so what a resume asks for does not depend on timing.
     */
    partFileOf: ((filePath: string) => string) | null = null;

    /** Per file, a hung response (`hangAfter`) that the client has closed (it stopped waiting). */
    readonly hangsClosed = new Map<string, Promise<void>>();

    constructor(readonly files: HubFile[]) {}

    async start() {
        const listen = (server: http.Server) => new Promise<string>((resolve) => server.listen(0, "127.0.0.1",
            () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
        this.url = await listen(this.hub);
        this.cdnUrl = await listen(this.cdn);
        return this;
    }

    /** Resolves once the client's partial file holds `bytes` bytes (bounded: a client that never stores them fails its test, it does not hang). */
    private async stored(filePath: string, bytes: number) {
        const part = this.partFileOf?.(filePath);
        for (let attempt = 0; part != null && attempt < 2000; attempt++) {
            if ((fs.existsSync(part) ? fs.statSync(part).size : 0) >= bytes)
                return;
            await new Promise((resolve) => setTimeout(resolve, 5));
        }
    }

    async close() {
        for (const server of [this.hub, this.cdn]) {
            server.closeAllConnections();
            await new Promise((resolve) => server.close(resolve));
        }
    }

    /** Requests that sent file bytes (200/206), optionally for one path. */
    contentRequests(path?: string) {
        return this.requests.filter((request) => (request.status === 200 || request.status === 206) && (path == null || request.file === path));
    }

    private handle(server: "hub" | "cdn", req: http.IncomingMessage, res: http.ServerResponse) {
        const log: HubRequest = {server, path: decodeURIComponent(req.url ?? ""), file: null, range: req.headers.range ?? null, authorization: req.headers.authorization ?? null, status: 0, bytesSent: 0};
        this.requests.push(log);
        const send = (status: number, headers: Record<string, string | number> = {}, body?: Buffer) => {
            log.status = status;
            res.writeHead(status, headers);
            res.end(body);
        };
        // The hub's API (`npm run download-models -- owner/repo...`): a repository's commit and its file tree.
        const api = server === "hub" ? /^\/api\/models\/([^/]+\/[^/]+)\/(revision\/main|tree\/([0-9a-f]{40}))(\?.*)?$/.exec(log.path) : null;
        if (api != null) {
            const files = this.files.filter((each) => each.repo === api[1]);
            if (files.length === 0)
                return send(404, {"Content-Type": "application/json"}, Buffer.from(JSON.stringify({error: "Repository not found"})));
            const body = api[3] == null
                ? {id: api[1], sha: files[0].revision, pipeline_tag: this.pipelineTags[api[1]]}
                : files.map((each) => ({type: "file", path: each.path, size: each.content.length,
                    ...(this.switches.linkedEtag ? {lfs: {oid: createHash("sha256").update(each.content).digest("hex"), size: each.content.length}} : {})}));
            return send(200, {"Content-Type": "application/json"}, Buffer.from(JSON.stringify(body)));
        }
        const file = server === "cdn"
            ? this.files[Number(/^\/cdn\/(\d+)$/.exec(log.path)?.[1] ?? -1)]
            : this.files.find((each) => log.path === `/${each.repo}/resolve/${each.revision}/${each.path}`);
        log.file = file?.path ?? null;
        if (file == null) {
            const repoKnown = this.files.some((each) => log.path.startsWith(`/${each.repo}/resolve/${each.revision}/`));
            return send(404, {"X-Error-Code": repoKnown ? "EntryNotFound" : "RevisionNotFound", "X-Error-Message": "Entry not found"});
        }
        const sha256 = createHash("sha256").update(file.content).digest("hex");
        const linked: Record<string, string | number> = this.switches.linkedEtag ? {"X-Linked-Etag": `"${sha256}"`, "X-Linked-Size": file.content.length} : {};
        if (server === "hub") {
            const token = this.switches.gated[file.repo];
            if (token != null && req.headers.authorization !== `Bearer ${token}`)
                return send(req.headers.authorization == null ? 401 : 403, {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access to this model is restricted."});
            const failure = this.switches.fail[file.path];
            if (failure != null)
                return send(failure.status, {...(failure.code != null ? {"X-Error-Code": failure.code} : {}), ...(failure.message != null ? {"X-Error-Message": failure.message} : {})});
            if (this.switches.redirectLocation != null)
                return send(302, {...linked, Location: this.switches.redirectLocation});
            if (this.switches.redirectToCdn)
                return send(302, {...linked, Location: `${this.cdnUrl}/cdn/${this.files.indexOf(file)}`});
        }
        this.serveContent(file, req, res, log, server === "hub" ? linked : {});
    }

    private serveContent(file: HubFile, req: http.IncomingMessage, res: http.ServerResponse, log: HubRequest, headers: Record<string, string | number>) {
        let content = file.content;
        if ((this.switches.corruptTimes[file.path] ?? 0) > 0) {
            this.switches.corruptTimes[file.path]--;
            content = Buffer.from(content);
            content[content.length >> 1] ^= 0xff;
        }
        let start = 0;
        const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
        if (range != null && this.switches.range) {
            start = Number(range[1]);
            if (start >= content.length) {
                log.status = 416;
                res.writeHead(416, {...headers, "Content-Range": `bytes */${content.length}`});
                return res.end();
            }
        }
        const body = content.subarray(start);
        log.status = range != null && this.switches.range ? 206 : 200;
        res.writeHead(log.status, {...headers, "Content-Length": body.length, "Content-Type": "application/octet-stream",
            ...(log.status === 206 ? {"Content-Range": `bytes ${start}-${content.length - 1}/${content.length}`} : {})});
        const hang = this.switches.hangAfter[file.path];
        if (hang != null) {
            delete this.switches.hangAfter[file.path];
            log.bytesSent = hang;
            this.hangsClosed.set(file.path, new Promise((resolve) => res.once("close", () => resolve())));
            res.write(body.subarray(0, hang));
            return;
        }
        const cut = this.switches.cutAfter[file.path];
        if (cut != null && (this.switches.cutTimes[file.path] ?? 1) > 0 && cut < body.length) {
            this.switches.cutTimes[file.path] = (this.switches.cutTimes[file.path] ?? 1) - 1;
            log.bytesSent = cut;
            // Send the first bytes, then drop the connection mid-body as a flaky network would, once the client has them.
            res.write(body.subarray(0, cut), () => void this.stored(file.path, start + cut).then(() => req.socket.destroy()));
            return;
        }
        log.bytesSent = body.length;
        res.end(body);
    }
}
