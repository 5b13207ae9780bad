import { describe, expect, it } from "vitest";
import type { ChatEngine, ChatJob, ChatRun, ChoiceResult } from "../../src/capabilities/chat/ChatEngine.js";
import { runPrompts } from "../../src/capabilities/chat/completions/runPrompts.js";
import { ApiError } from "../../src/core/http/ApiError.js";

/** An engine whose runs finish when the test says so; a prompt "too long" is refused at submit. */
class ScriptedEngine {
    readonly submitted: number[] = [];
    readonly finish = new Map<number, () => void>();
    running = 0;
    maxRunning = 0;
    readonly aborted: number[] = [];

    async submit(job: ChatJob, hooks: {signal: AbortSignal}): Promise<ChatRun> {
        const prompt = job.rawPrompt!.prompt as string;
        if (prompt === "too long")
            throw new Error("context");
        const id = Number(prompt);
        this.submitted.push(id);
        this.running++;
        this.maxRunning = Math.max(this.maxRunning, this.running);
        const done = new Promise<ChoiceResult[]>((resolve, reject) => {
            const onAbort = () => {
                this.running--;
                this.aborted.push(id);
                reject(hooks.signal.reason);
            };
            this.finish.set(id, () => {
                hooks.signal.removeEventListener("abort", onAbort);
                this.running--;
                resolve([{index: 0, text: `text ${id}`, finishReason: "stop", completionTokens: 1}]);
            });
            hooks.signal.addEventListener("abort", onAbort, {once: true});
        });
        return {promptTokens: id + 10, done};
    }
}

const job = (prompt: string): ChatJob => ({
    turns: [], rawPrompt: {prompt}, n: 1, maxTokens: 1, stop: [], jsonObject: false, jsonSchema: null,
    sampling: {temperature: 0, topP: 1, seed: 0, frequencyPenalty: 0, presencePenalty: 0, logitBias: new Map()}
});

function start(prompts: string[], concurrency: number) {
    const engine = new ScriptedEngine();
    const stopAll = new AbortController();
    const {started, results} = runPrompts({
        engine: engine as unknown as ChatEngine,
        jobs: prompts.map(job),
        concurrency,
        signal: stopAll.signal,
        stopAll,
        hooksOf: () => ({}),
        toError: (error, prompt) => ApiError.invalidRequest(`prompt ${prompt}: ${(error as Error).message}`, `prompt[${prompt}]`)
    });
    results.catch(() => {});
    return {engine, started, results, stopAll};
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("runPrompts", () => {
    it("runs at most `concurrency` prompts at once, the next when one is done, results in prompt order", async () => {
        const {engine, started, results} = start(["0", "1", "2", "3", "4"], 2);
        expect(engine.submitted).toEqual([0, 1]);
        await started;
        engine.finish.get(1)!();
        await settle();
        expect(engine.submitted).toEqual([0, 1, 2]);
        engine.finish.get(0)!();
        await settle();
        engine.finish.get(2)!();
        await settle();
        engine.finish.get(3)!();
        await settle();
        engine.finish.get(4)!();
        const runs = await results;
        expect(runs.map((run) => run.promptTokens)).toEqual([10, 11, 12, 13, 14]);
        expect(runs.map((run) => run.choices[0].text)).toEqual(["text 0", "text 1", "text 2", "text 3", "text 4"]);
        expect(engine.maxRunning).toBe(2);
    });

    it("a refusal in the first wave rejects `started` (before any header), and the prompts already submitted are stopped", async () => {
        const {engine, started, results} = start(["0", "too long"], 4);
        await expect(started).rejects.toMatchObject({param: "prompt[1]"});
        await expect(results).rejects.toMatchObject({param: "prompt[1]"});
        expect(engine.aborted).toEqual([0]);
    });

    it("a refusal of a later prompt rejects the whole run and stops the others", async () => {
        const {engine, results} = start(["0", "1", "too long", "3"], 2);
        engine.finish.get(0)!();
        await expect(results).rejects.toMatchObject({param: "prompt[2]"});
        expect(engine.aborted).toEqual([1]);
        expect(engine.submitted).toEqual([0, 1]);
    });

    it("concurrency below 1 (best_of above parallel) still runs one lane, so the engine can refuse it", async () => {
        const {engine, results} = start(["0"], 0);
        expect(engine.submitted).toEqual([0]);
        engine.finish.get(0)!();
        expect((await results)[0].promptTokens).toBe(10);
    });
});
