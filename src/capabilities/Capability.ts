import type { GgufContextShape } from "../runtimes/estimateModelBytes.js";
import type Router from "@koa/router";
import type { Context, Middleware } from "koa";
import type { ApiError } from "../core/http/ApiError.js";
import type { MultipartLimits } from "../core/http/multipartBody.js";
import type { Engine } from "../core/engines/Engine.js";
import type { ModelEstimate } from "../core/engines/MemoryEstimate.js";
import type { EngineHost } from "../core/engines/EngineHost.js";
import type { ModelEntry } from "../core/registry/ModelEntry.js";
import type { ModelRegistry } from "../core/registry/ModelRegistry.js";
import type { RunFolder } from "../core/files/RunFolder.js";
import type { WorkerPool } from "../core/workers/WorkerPool.js";
import type { Logger } from "../logger.js";
import type { CapabilityConfig } from "./capabilitySettings.js";
import type { CapabilityManifest } from "./CapabilityManifest.js";

/** What a capability gets to build the engine of one of its models. */
export type EngineContext = {
    config: CapabilityConfig;
    logger: Logger;
    /** The one shared worker pool, started on first use. */
    workers(): WorkerPool;
    /**
     * This run's folder under `--cache-dir` (files kept across a model's unload, e.g. chat's saved prompt caches;
     * removed at shutdown), and a signal aborted when the server starts shutting down (an engine disposed then
     * keeps nothing for a later load). None (an engine made outside a server, in tests): nothing is kept.
     */
    runFiles?: {folder: RunFolder, closing: AbortSignal};
    /**
     * The model's memory estimate, for which the library reserved memory, with what it counted that the engine must
     * create the same (a GGUF model's context: ModelEstimate); none outside a server.
     */
    estimate?: ModelEstimate;
    /** Hears how far this engine's load is, 0 to 1 (GGUF: node-llama-cpp's `onLoadProgress` of the weights), for `GET /models`. */
    onLoadProgress?(fraction: number): void;
    /** The models the server serves (read when asked: the library may change), for an engine whose refusals name the served models that can; none outside a server. */
    registry?: ModelRegistry;
};

/** What a capability's routes get. */
export type RouteContext = {
    /** The server's settings (a capability reads its own, e.g. chat's response store). */
    config: CapabilityConfig;
    engines: EngineHost;
    logger: Logger;
    ssePingMs: number;
    /** Parses a JSON request body (415 for other media types, 413 past the limit). */
    jsonBody: Middleware;
    /**
     * The same, for a route whose bodies must also hold at most `maxValues` JSON values, and at most `maxItems[field]`
     * items in each named top-level array (checked where the body is parsed, in a worker thread for large bodies,
     * before the body reaches the main thread: see findJsonHazard).
     */
    jsonBodyWithin(bounds: {maxValues: number, maxItems?: Readonly<Record<string, number>>, maxFieldValues?: Readonly<Record<string, number>>}): Middleware;
    /** Parses a multipart/form-data body (uploads, in memory): fields to `ctx.request.body`, files to `ctx.state.files`. */
    multipartBody(limits: MultipartLimits): Middleware;
    /** The base URL (scheme, host, port) of links handed to this request's client: `--public-url`, else a trusted Host, else the bound address. */
    linkBase(ctx: Context): string;
    /** The routes that need no API key, outside /v1 (e.g. unguessable image links, as OpenAI's signed URLs): anything else a capability adds is protected. */
    publicRouter: Router;
    /** Routes outside /v1 that need the API key as /v1's do (another server's own paths, e.g. llama-server's and vLLM's `/tokenize`). */
    rootRouter: Router;
};

/**
 * One thing the server does (chat, embeddings, speech, images), everything of it in its own folder:
 * its manifest part (`CapabilityManifest`, in `<name>ManifestPart.ts`) and the server part here:
 * wire schema and mappers, engine interface and implementations, routes, manifest settings, the
 * engine errors it maps to API errors, and its worker task modules. The server is generic over the
 * list in `capabilityList.ts`: adding a capability is a folder and one line there.
 */
export type Capability<E extends Engine = Engine, Settings = unknown> = CapabilityManifest<Settings> & {
    /** Loads one of its models. */
    createEngine(entry: ModelEntry<Settings>, context: EngineContext): Promise<E>;
    /** Adds its routes to the /v1 router. */
    routes(router: Router, context: RouteContext): void;
    /**
     * Routes (full patterns, e.g. `/v1/messages`) whose errors use another API's shape and status codes
     * than OpenAI's (and headers of their own): every error of that route, the key check's included, goes through it.
     */
    errorShapes?: Readonly<Record<string, (error: ApiError, requestId: string) => {status: number, body: unknown, headers?: Record<string, string>}>>;
    /** The context its engine creates for a GGUF model, for the memory estimate before loading (runtimes/estimateModelBytes); none = one sequence of the trained context. */
    ggufContext?(entry: ModelEntry<Settings>, config: CapabilityConfig, trainContextSize: number | undefined): GgufContextShape;
    /** A sentence added to the refusal of one of its models larger than the whole memory budget: what sizes its memory. */
    memoryHint?(entry: ModelEntry<Settings>): string | undefined;
    /** Its engines' errors as the client sees them; undefined = not one of its errors. */
    toApiError?(error: unknown): ApiError | undefined;
};
