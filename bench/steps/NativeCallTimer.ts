import type { LlamaContext } from "node-llama-cpp";

/**
 * Times node-llama-cpp's native calls on one context: each `decodeBatch` (an async call that runs
 * llama_decode on libuv's thread pool, timed from the call to the resolution of its promise) and
 * the number of tokens in each batch (`initBatch`'s argument). Wraps the context's internal
 * `_ctx` binding object; the bench's only use of node-llama-cpp internals.
 */
export class NativeCallTimer {
    readonly decodeMs: number[] = [];
    readonly batchTokens: number[] = [];

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
                    timer.batchTokens.push(size);
                    return value.call(target, size);
                };
            if (property === "decodeBatch")
                return () => {
                    const start = performance.now();
                    const done = value.call(target) as Promise<void>;
                    void done.then(() => timer.decodeMs.push(performance.now() - start), () => undefined);
                    return done;
                };
            return value.bind(target);
        }});
    }

    reset() {
        this.decodeMs.length = 0;
        this.batchTokens.length = 0;
    }
}
