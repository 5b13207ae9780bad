import type { LlamaContext } from "node-llama-cpp";

type NativeContext = {decodeBatch(): Promise<void>};
type ContextInternals = {_ctx: NativeContext};

/**
 * Runs work right after node-llama-cpp has handed a batch to llama.cpp, i.e. while the batch
 * decodes on libuv's thread pool, instead of before.
 *
 * Why: between two decode steps the main thread is the bottleneck (node-llama-cpp's generator,
 * sampling hand-offs, then ours). Formatting and writing a token's text (stop sequences, the SSE
 * chunk, the socket write: ~0.1 ms per token and stream, measured with `npm run bench:steps`) does
 * not need to happen before the next step starts, so generateChoice asks for the next token first
 * and hands the text out here, on the other core, while the decode runs.
 *
 * The hook wraps the context's native `decodeBatch` (node-llama-cpp internals, like
 * RawDistributionTap; `install` fails at startup if the method is not there). Work left here
 * runs at the next decode of the context, whichever sequence it is for; an owner that cannot wait
 * for one runs it itself (the function `defer` returns).
 */
export class WhileDecoding {
    private queued: (() => void)[] = [];

    static install(context: LlamaContext): WhileDecoding {
        const holder = context as unknown as ContextInternals;
        const native = holder._ctx;
        if (native == null || typeof native.decodeBatch !== "function")
            throw new Error("This node-llama-cpp version's native context has no decodeBatch; WhileDecoding needs updating.");
        const whileDecoding = new WhileDecoding();
        holder._ctx = new Proxy(native, {
            get(target, property) {
                if (property === "decodeBatch")
                    return () => {
                        const decoding = target.decodeBatch();
                        whileDecoding.runQueued();
                        return decoding;
                    };
                const value = Reflect.get(target, property);
                return typeof value === "function" ? value.bind(target) : value;
            }
        });
        return whileDecoding;
    }

    /**
     * `work` runs at the next decode of the context. The returned function runs it now instead if it
     * has not run yet, and throws what it threw (wherever it ran): the owner calls it before it
     * depends on the work being done.
     */
    defer(work: () => void): () => void {
        let state: {ran: false} | {ran: true, failed: boolean, error?: unknown} = {ran: false};
        const run = () => {
            if (state.ran)
                return;
            try {
                work();
                state = {ran: true, failed: false};
            } catch (error) {
                state = {ran: true, failed: true, error};
            }
        };
        this.queued.push(run);
        return () => {
            run();
            if (state.ran && state.failed)
                throw state.error;
        };
    }

    private runQueued() {
        const queued = this.queued;
        this.queued = [];
        // `run` never throws: a failure waits for the owner.
        for (const run of queued)
            run();
    }
}
