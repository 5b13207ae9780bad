import type { Middleware } from "koa";
import type { EngineHost } from "../core/engines/EngineHost.js";
import { ApiError } from "../core/http/ApiError.js";
import type { RequestState } from "../core/http/RequestState.js";
import type { ModelEntry } from "../core/registry/ModelEntry.js";
import { SseWriter } from "../core/streaming/SseWriter.js";
import { streamResponse } from "../core/streaming/streamResponse.js";
import { compileRequestValidator } from "../core/validation/compileRequestValidator.js";
import { toModelObject } from "./modelsHandlers.js";

type PullEvent = {model: string, event: string, data: unknown};

/**
 * Pulls models from the hub (wired in by startServer: the downloader, `src/download/pullModel.ts`). Resolving the
 * name happens before anything is sent (an unknown name is a plain 4xx); `run` downloads, verifies and adds the models
 * to the manifest, sending its progress, and resolves with their manifest entries.
 */
export type ModelPuller = (request: {name: string, dtype: string | null, allowUnverified: boolean}) =>
    Promise<{models: string[], run(send: (event: PullEvent) => void): Promise<ModelEntry[]>}>;

type PullBody = {model: string, dtype?: string, allow_unverified?: boolean};

const pullSchema = {
    type: "object",
    required: ["model"],
    properties: {
        model: {type: "string", minLength: 1},
        dtype: {type: "string", minLength: 1},
        allow_unverified: {type: "boolean"}
    }
};

/**
 * POST /models/pull {model, dtype?, allow_unverified?} (an administrator's): downloads a model from the hub by the
 * names `npm run download-models` takes, verified as it verifies, and serves it at once (registered in the library,
 * unloaded). The answer is an SSE stream of `{"model", "event", "data"}` events (llama-server's `/models/sse` shape):
 * `message`, `download_progress`, `file_verified`, then `download_finished` per model (its /v1/models object); a
 * failure after the headers is an `error` event. One pull at a time: another meanwhile gets 409.
 */
export function pullModelHandler(engines: EngineHost, puller: ModelPuller, ssePingMs: number): Middleware {
    const validate = compileRequestValidator<PullBody>(pullSchema);
    let running: string | null = null;
    return async (ctx) => {
        const state = ctx.state as RequestState;
        const body = validate(ctx.request.body);
        if (running != null)
            throw new ApiError(409, "invalid_request_error", `A pull is running ('${running}'): one pull at a time. Try again once it ends.`,
                {code: "pull_in_progress", param: "model"});
        running = body.model;
        state.logFields.model = body.model;
        const writer = new SseWriter(ctx, {pingMs: ssePingMs, errorBody: (error) => ({model: body.model, event: "download_failed", data: error.toBody()})});
        try {
            const plan = puller({name: body.model, dtype: body.dtype ?? null, allowUnverified: body.allow_unverified === true});
            await streamResponse(ctx, writer, {
                started: plan,
                produce: async (sse) => {
                    // A client that goes away stops reading, not the pull: what is fetched is kept and registered.
                    const entries = await (await plan).run((event) => sse.send(event));
                    // Registered unloaded; a model this server already served (pulled again) stays as it was.
                    engines.register(entries);
                    for (const entry of entries)
                        sse.send({model: entry.id, event: "download_finished", data: toModelObject(engines, engines.registry.resolve(entry.id)!)});
                }
            });
        } finally {
            running = null;
        }
    };
}
