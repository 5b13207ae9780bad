/**
 * A capability that exists only in the tests: `POST /v1/gate/hold` occupies one worker of the shared
 * pool until the test opens the gate (`openGate()`, `POST /v1/gate/open`, or SIGUSR2 in a spawned
 * server), so "a request is waiting for / using the pool" is a state a test reaches deterministically
 * instead of by racing a timer. The response is SSE: `held` once a worker runs the task, `released`
 * when the gate opens (or an error event when the request is cancelled).
 */
import { StreamStart } from "../../../src/core/streaming/StreamStart.js";
import type { Capability } from "../../../src/capabilities/Capability.js";
import { AdmissionQueue } from "../../../src/core/admission/AdmissionQueue.js";
import type { Engine } from "../../../src/core/engines/Engine.js";
import { EngineDisposedError } from "../../../src/core/engines/EngineDisposedError.js";
import type { RequestState } from "../../../src/core/http/RequestState.js";
import { SseWriter } from "../../../src/core/streaming/SseWriter.js";
import { streamResponse } from "../../../src/core/streaming/streamResponse.js";
import type { WorkerPool } from "../../../src/core/workers/WorkerPool.js";
import { taskModule } from "../../../src/core/workers/TaskHandle.js";
import type { tasks } from "./gateTasks.js";

const holdTask = taskModule<typeof tasks>(new URL("./gateTasks.ts", import.meta.url).href).task("hold");

/** Shared with the worker threads (a SharedArrayBuffer is not copied): each open bumps the counter. */
const gate = new Int32Array(new SharedArrayBuffer(4));

/** Main-thread waiters of the next opening (the gated fake engines of gatedFakeEngines.ts). */
let openings: (() => void)[] = [];

/** Releases every task holding a worker now, and every main-thread waiter. */
export function openGate() {
    Atomics.add(gate, 0, 1);
    Atomics.notify(gate, 0);
    const waiting = openings;
    openings = [];
    for (const resolve of waiting)
        resolve();
}

/** Resolves at the gate's next opening, or when `signal` aborts, whichever is first. */
export function gateOpened(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
        if (signal.aborted)
            return resolve();
        openings.push(resolve);
        signal.addEventListener("abort", () => resolve(), {once: true});
    });
}

class GateEngine implements Engine {
    private readonly admission = new AdmissionQueue(16, 16, "gate");

    constructor(private readonly workers: WorkerPool) {}

    load() {
        return this.admission.load();
    }

    hold(signal: AbortSignal, onHeld: () => void) {
        return this.admission.run(1, signal, () => this.workers.run(holdTask, {gate, since: Atomics.load(gate, 0)}, {signal, onProgress: onHeld}));
    }

    async dispose() {
        this.admission.close(new EngineDisposedError("gate"));
        await this.admission.drain();
    }
}

export const gateCapability: Capability<GateEngine> = {
    task: "gate",
    endpoints: ["/v1/gate/hold"],
    createEngine: async (_entry, {workers}) => new GateEngine(workers()),
    routes(router, context) {
        router.post("/gate/hold", context.jsonBody, async (ctx) => {
            const state = ctx.state as RequestState;
            const {engine} = await context.engines.engineFor<GateEngine>((ctx.request.body as {model: string}).model, "gate");
            const writer = new SseWriter(ctx, {pingMs: context.ssePingMs});
            let start!: StreamStart;
            const run = engine.hold(state.signal, () => {
                writer.send({held: true}, "held");
                start.reached();
            });
            start = new StreamStart(run);
            await streamResponse(ctx, writer, {started: start.started, produce: async () => writer.send(await run, "released")});
        });
        router.post("/gate/open", (ctx) => {
            openGate();
            ctx.status = 204;
        });
    }
};

/** A manifest entry serving the gate (its path is never read). */
export const gateModel = (path: string) => ({id: "gate", task: "gate", path});
