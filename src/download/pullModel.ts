import path from "node:path";
import type { CapabilityManifest } from "../capabilities/CapabilityManifest.js";
import { loadServedManifest } from "../capabilities/loadServedManifest.js";
import type { HubConfig } from "../config.js";
import { ApiError } from "../core/http/ApiError.js";
import type { ModelEntry } from "../core/registry/ModelEntry.js";
import type { CatalogueEntry } from "./CatalogueEntry.js";
import { relativePathPattern } from "./catalogueSchema.js";
import { DownloadError } from "./DownloadError.js";
import { downloadModels } from "./downloadModels.js";
import type { FileProgress } from "./DownloadProgress.js";
import { hubRepoEntry, parseHubSpec } from "./hubRepoEntry.js";
import { selectModels } from "./selectModels.js";

/** One event of a pull's stream (the JSON of each SSE `data:`), in the shape of llama-server's `/models/sse` events. */
export type PullEvent = {model: string, event: string, data: unknown};

/** Where pulled models go and come from. */
export type PullSettings = {
    /** The manifest pulled models are added to; their files go to its folder (as `npm run download-models` does). */
    manifestPath: string;
    hub: HubConfig;
    catalogue: () => CatalogueEntry[];
    /** The server's capabilities, to read the manifest back as it does. */
    capabilities: readonly CapabilityManifest[];
    fetch?: typeof fetch;
    retryDelayMs?: number;
    /** The server shutting down: a pull under way stops, its file under way kept (`.part`) for the next pull to resume. */
    stop?: AbortSignal;
};

/** What a client asks to pull: the names `npm run download-models` takes (a catalogue id, alias or task; a hub repository). */
export type PullRequest = {name: string, dtype: string | null, allowUnverified: boolean};

/** A pull resolved (nothing fetched yet): the models it will fetch, and what fetches them. */
export type PullPlan = {models: string[], run(send: (event: PullEvent) => void): Promise<ModelEntry[]>};

/**
 * The management API's pull: `name` resolved like `npm run download-models` resolves it (a hub repository is asked
 * for its commit and file tree now, so an unknown one is a 404 before any event), then, in `run`, downloaded, verified
 * and added to the manifest by the downloader itself, its progress sent as events. `run` resolves with the pulled
 * models' manifest entries (for the server to register). Failures are ApiErrors naming the field.
 */
export async function planPull(request: PullRequest, settings: PullSettings): Promise<PullPlan> {
    let entries: CatalogueEntry[];
    try {
        entries = await resolveName(request, settings);
    } catch (error) {
        throw toApiError(error, request.name);
    }
    const manifestPath = path.resolve(settings.manifestPath);
    return {
        models: entries.map((entry) => entry.id),
        run: async (send) => {
            const say = (line: string) => send({model: request.name, event: "message", data: {message: line}});
            let summary;
            try {
                summary = await downloadModels({
                    catalogue: entries, only: entries.map((entry) => entry.id), modelsDir: path.dirname(manifestPath), manifestPath,
                    hub: settings.hub, fetch: settings.fetch, retryDelayMs: settings.retryDelayMs, allowUnverified: request.allowUnverified, signal: settings.stop,
                    out: {write: (text: string) => text.split("\n").filter((line) => line !== "").forEach(say)},
                    progress: new EventProgress(send, say)
                });
            } catch (error) {
                throw toApiError(error, request.name);
            }
            const pulled = new Set(summary.models);
            return loadServedManifest(manifestPath, settings.capabilities).filter((entry) => pulled.has(entry.id));
        }
    };
}

async function resolveName(request: PullRequest, settings: PullSettings): Promise<CatalogueEntry[]> {
    const spec = request.name.includes("/") ? parseHubSpec(request.name) : null;
    if (spec != null) {
        const entry = await hubRepoEntry({...spec, dtype: request.dtype}, settings.hub, settings.fetch);
        // The hub's tree names the files (the catalogue's paths are checked by its schema): none may climb out of the model's folder.
        const unsafe = entry.files.find((file) => !new RegExp(relativePathPattern).test(file.path));
        if (unsafe != null)
            throw new ApiError(502, "server_error", `The hub (${settings.hub.hfEndpoint}) named a file '${unsafe.path}' in ${spec.repo} that is not a plain relative path; nothing was downloaded.`,
                {code: "hub_unsafe_path"});
        return [entry];
    }
    const catalogue = settings.catalogue();
    if (!catalogue.some((entry) => entry.id === request.name || entry.aliases.includes(request.name) || (entry.task === request.name && entry.default)))
        throw new ApiError(404, "invalid_request_error",
            `'${request.name}' is neither a model of the catalogue (${catalogue.map((entry) => entry.id).join(", ")}), nor one of their aliases, nor a task ` +
            `(${[...new Set(catalogue.map((entry) => entry.task))].join(", ")}: its default model), nor a hub repository (owner/repo, owner/repo:Q4_K_M, owner/repo/file.gguf).`,
            {code: "model_not_found", param: "model"});
    return selectModels(catalogue, [request.name]);
}

/** A downloader failure as the management API answers it (before the stream: its status; inside it: its error event). */
function toApiError(error: unknown, name: string): unknown {
    if (!(error instanceof DownloadError))
        return error;
    const message = error.message.replace(/--dtype/g, "dtype").replace(/--allow-unverified/g, "allow_unverified: true");
    switch (error.kind) {
        case "usage":
            return ApiError.invalidRequest(message, /dtype/.test(message) ? "dtype" : "model", "invalid_model");
        case "notFound":
            return new ApiError(404, "invalid_request_error", message, {code: "model_not_found", param: "model"});
        case "disk":
            return new ApiError(507, "server_error", message, {code: "insufficient_storage"});
        case "catalogue":
        case "manifest":
            return new ApiError(500, "server_error", message, {code: `${error.kind}_error`});
        default:
            // The hub refused or failed (auth, checksum, network, http): the server's upstream, not the client.
            return new ApiError(502, "server_error", `Pulling '${name}': ${message}`, {code: `hub_${error.kind}`});
    }
}

/**
 * A pull's progress as events: per file `download_progress` (`{"<file>": {done, total}}`, as llama-server's) at its start,
 * at each hundredth of it (each MiB when its size is unknown) and at its end, then `file_verified`; the downloader's
 * notes (a resume, a retry) as `message`. Counted in bytes, never in time.
 */
class EventProgress implements FileProgress {
    private model = "";
    private file = "";
    private total: number | null = null;
    private received = 0;
    private nextAt = 0;

    constructor(private readonly send: (event: PullEvent) => void, private readonly say: (line: string) => void) {}

    start(label: string, total: number | null, resumedFrom: number) {
        const slash = label.indexOf("/");
        Object.assign(this, {model: label.slice(0, slash), file: label.slice(slash + 1), total, received: resumedFrom});
        this.emit();
    }

    advance(bytes: number) {
        this.received += bytes;
        if (this.received >= this.nextAt && this.received < (this.total ?? Infinity))
            this.emit();
    }

    done(note: string) {
        this.emit();
        this.send({model: this.model, event: "file_verified", data: {file: this.file, bytes: this.received, verification: note}});
    }

    note(message: string) {
        this.say(message);
    }

    stop() {}

    private emit() {
        this.nextAt = this.received + (this.total != null ? Math.max(1, Math.ceil(this.total / 100)) : 2 ** 20);
        this.send({model: this.model, event: "download_progress", data: {[this.file]: {done: this.received, total: this.total}}});
    }
}
