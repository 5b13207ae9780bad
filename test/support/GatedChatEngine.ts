import type { ChatEngine, ChatEngineInfo, ChatJob, ChatRun, ChatRunHooks } from "../../src/capabilities/chat/ChatEngine.js";
import type { EngineLoad } from "../../src/core/engines/EngineLoad.js";

/**
 * A chat engine that writes its first piece at once, then waits for the test to `release()` it:
 * a deterministic "generation in progress" (busy sequence) without any timer.
 */
export class GatedChatEngine implements ChatEngine {
    readonly info: ChatEngineInfo;
    busy = 0;
    #release!: () => void;
    #gate = new Promise<void>((resolve) => this.#release = resolve);
    /** Resolves when a job has written its first piece. */
    started: Promise<void>;
    #started!: () => void;

    constructor(id: string) {
        this.info = {id, contextSize: 1000, vocabularySize: 100, fingerprint: "fp_gated"};
        this.started = new Promise((resolve) => this.#started = resolve);
    }

    release() {
        this.#release();
    }

    load(): EngineLoad {
        return {parallel: 2, busy: this.busy, waiting: 0};
    }

    submit(job: ChatJob, hooks: ChatRunHooks): ChatRun {
        this.busy++;
        const done = (async () => {
            try {
                // Engines call back asynchronously: the handler opens its stream after submit() returns.
                await new Promise((resolve) => setImmediate(resolve));
                hooks.onText?.(0, "first");
                this.#started();
                await Promise.race([this.#gate, new Promise((_, reject) => hooks.signal.addEventListener("abort", () => reject(hooks.signal.reason)))]);
                hooks.onText?.(0, " second");
                const result = {index: 0, text: "first second", finishReason: "stop" as const, completionTokens: 2};
                hooks.onFinish?.(result);
                return [result];
            } finally {
                this.busy--;
            }
        })();
        done.catch(() => {});
        return {promptTokens: 7, done};
    }

    async dispose() {}
}
