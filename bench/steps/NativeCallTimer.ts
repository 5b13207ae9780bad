import type { LlamaContext } from "node-llama-cpp";

/** What happened in one generation step, in ms (see NativeCallTimer.steps). */
export type StepPhases = {
    /** Tokens in the step's batch. */
    tokens: number;
    /** `decodeBatch`, from the call to the resolution of its promise (llama_decode on libuv's thread pool, plus the hops). */
    decodeMs: number;
    /**
     * From the decode's resolution to the last `sampleToken` resolution of the step (the samples run on the pool too); 0
     * when the decode call sampled the step itself (the native build's `decodeBatch` with samples).
     */
    sampleMs: number;
    /** From the last sample to the next `decodeBatch` call: the JavaScript between two steps. */
    javascriptMs: number;
};

/**
 * Times node-llama-cpp's native calls on one context: `initBatch` (the batch size), `decodeBatch`
 * (call and resolution; with samples, the step's samples resolve with it) and `sampleToken` (resolution). Wraps the context's internal `_ctx`
 * binding object; the bench's only use of node-llama-cpp internals.
 */
export class NativeCallTimer {
    /** A decode call carries the size its batch was initialized with. */
    private events: {kind: "decodeCall" | "decodeDone" | "sampleDone", at: number, size?: number}[] = [];
    private batchSize = 0;

    constructor(context: LlamaContext) {
        const internals = context as unknown as {_ctx: Record<string, unknown>};
        const native = internals._ctx;
        const timer = this;
        internals._ctx = new Proxy(native, {get(target, property) {
            const value = target[property as string];
            if (typeof value !== "function")
                return value;
            if (property === "initBatch")
                return (size: number) => {
                    timer.batchSize = size;
                    return value.call(target, size);
                };
            if (property === "decodeBatch" || property === "sampleToken")
                return (...args: unknown[]) => {
                    if (property === "decodeBatch")
                        timer.events.push({kind: "decodeCall", at: performance.now(), size: timer.batchSize});
                    const done = value.apply(target, args) as Promise<unknown>;
                    const list = timer.events;
                    const sampledInDecode = property === "decodeBatch" && Array.isArray(args[0]);
                    void done.then(() => {
                        const at = performance.now();
                        list.push({kind: property === "decodeBatch" ? "decodeDone" : "sampleDone", at});
                        if (sampledInDecode)
                            list.push({kind: "sampleDone", at});
                    }, () => undefined);
                    return done;
                };
            return value.bind(target);
        }});
    }

    /** The time of every `decodeBatch` since `reset`, call to resolution, summed. */
    decodeTotalMs(): number {
        let total = 0;
        let call = NaN;
        for (const event of this.events) {
            if (event.kind === "decodeCall")
                call = event.at;
            if (event.kind === "decodeDone")
                total += event.at - call;
        }
        return total;
    }

    reset() {
        this.events = [];
    }

    /**
     * The generation steps since `reset` (batches of at most `streams` tokens; prompt batches are
     * longer), each split into its phases; the last step (no next decode) is left out.
     */
    steps(streams: number): StepPhases[] {
        const steps: StepPhases[] = [];
        const calls = this.events.flatMap((event, index) => event.kind === "decodeCall" ? [index] : []);
        for (let c = 0; c + 1 < calls.length; c++) {
            const slice = this.events.slice(calls[c], calls[c + 1] + 1);
            const size = slice[0].size ?? 0;
            const decodeDone = slice.find((event) => event.kind === "decodeDone");
            const samples = slice.filter((event) => event.kind === "sampleDone");
            if (size > streams || decodeDone == null || samples.length === 0)
                continue;
            const lastSample = samples.at(-1)!.at;
            steps.push({
                tokens: size,
                decodeMs: decodeDone.at - slice[0].at,
                sampleMs: lastSample - decodeDone.at,
                javascriptMs: slice.at(-1)!.at - lastSample
            });
        }
        return steps;
    }
}
