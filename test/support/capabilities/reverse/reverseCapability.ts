/**
 * A capability that exists only in the tests, to prove the seam: its own route, manifest settings, model
 * recognition (reverseManifestPart.ts), engine, error mapping and worker task with progress, plugged in
 * without editing any file of src/: this folder and one line of a capability list.
 */
import { StreamStart } from "../../../../src/core/streaming/StreamStart.js";
import type { Middleware } from "koa";
import type { Capability, RouteContext } from "../../../../src/capabilities/Capability.js";
import { AdmissionQueue } from "../../../../src/core/admission/AdmissionQueue.js";
import type { Engine } from "../../../../src/core/engines/Engine.js";
import { EngineDisposedError } from "../../../../src/core/engines/EngineDisposedError.js";
import { ApiError } from "../../../../src/core/http/ApiError.js";
import type { RequestState } from "../../../../src/core/http/RequestState.js";
import { SseWriter } from "../../../../src/core/streaming/SseWriter.js";
import { streamResponse } from "../../../../src/core/streaming/streamResponse.js";
import { compileRequestValidator } from "../../../../src/core/validation/compileRequestValidator.js";
import type { WorkerPool } from "../../../../src/core/workers/WorkerPool.js";
import { taskModule } from "../../../../src/core/workers/TaskHandle.js";
import { reverseManifestPart, type ReverseSettings } from "./reverseManifestPart.js";
import type { tasks } from "./reverseTasks.js";

const reverseTask = taskModule<typeof tasks>(new URL("./reverseTasks.ts", import.meta.url).href).task("reverse");

class TextTooLongError extends Error {
    constructor(readonly maxLength: number) {
        super(`The text is longer than this model's ${maxLength} characters.`);
    }
}

export class ReverseEngine implements Engine {
    private readonly admission: AdmissionQueue;

    constructor(readonly id: string, private readonly settings: ReverseSettings, private readonly workers: WorkerPool) {
        this.admission = new AdmissionQueue(1, 4, id);
    }

    load() {
        return this.admission.load();
    }

    reverse(text: string, signal: AbortSignal, onProgress?: (step: {step: number, steps: number, partial: string}) => void) {
        if ([...text].length > this.settings.maxLength)
            throw new TextTooLongError(this.settings.maxLength);
        return this.admission.run(1, signal, () => this.workers.run(reverseTask, {text, repeat: this.settings.repeat}, {signal, onProgress}));
    }

    async dispose() {
        this.admission.close(new EngineDisposedError(this.id));
        await this.admission.drain();
    }
}

type ReverseRequest = {model: string, text: string, stream?: boolean};

function reverseHandler(context: RouteContext): Middleware {
    const validate = compileRequestValidator<ReverseRequest>({
        type: "object",
        required: ["model", "text"],
        properties: {model: {type: "string"}, text: {type: "string", minLength: 1}, stream: {type: "boolean"}}
    });
    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body);
        const {engine} = await context.engines.engineFor<ReverseEngine>(request.model, "reverse");
        if (request.stream !== true) {
            ctx.body = await engine.reverse(request.text, state.signal);
            return;
        }
        const writer = new SseWriter(ctx, {pingMs: context.ssePingMs});
        let start!: StreamStart;
        const run = engine.reverse(request.text, state.signal, (step) => {
            writer.send(step, "reverse.progress");
            start.reached();
        });
        start = new StreamStart(run);
        await streamResponse(ctx, writer, {started: start.started, produce: async () => writer.send(await run, "reverse.done")});
    };
}

export const reverseCapability: Capability<ReverseEngine, ReverseSettings> = {
    ...reverseManifestPart,
    createEngine: async (entry, {workers}) => new ReverseEngine(entry.id, entry.settings, workers()),
    routes(router, context) {
        router.post("/reverse", context.jsonBody, reverseHandler(context));
    },
    toApiError: (error) => error instanceof TextTooLongError ? ApiError.invalidRequest(error.message, "text", "text_too_long") : undefined
};
