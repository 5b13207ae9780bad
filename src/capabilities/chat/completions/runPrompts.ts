import type { ChatEngine, ChatJob, ChatRun, ChatRunHooks, ChoiceResult } from "../ChatEngine.js";

export type PromptRun = {promptTokens: number, choices: ChoiceResult[]};

export type RunPromptsOptions = {
    engine: ChatEngine;
    jobs: readonly ChatJob[];
    /** Prompts in flight at once: as many as the model's sequences hold (each takes `n` or `best_of`). */
    concurrency: number;
    /** The request's signal joined with `stopAll`'s. */
    signal: AbortSignal;
    /** Aborted when one prompt fails, so the others stop and free their sequences. */
    stopAll: AbortController;
    hooksOf: (prompt: number) => Omit<ChatRunHooks, "signal">;
    /** An engine's refusal of a prompt (too long, empty...) as the client sees it. */
    toError: (error: unknown, prompt: number) => unknown;
};

/**
 * Runs the jobs of a request's prompts, `concurrency` at a time: each lane submits its next prompt
 * when its last one is done, so a request with many prompts holds at most the model's sequences
 * and as many places in its queue as it has lanes (it never fills the queue by itself, and other
 * clients are not stuck behind all of its prompts). `started` settles once the first prompts are
 * taken, so their refusals (and a full queue) are reported before any response header; a later
 * prompt's refusal ends the response like any failure (an error event once streaming).
 */
export function runPrompts(options: RunPromptsOptions): {started: Promise<void>, results: Promise<PromptRun[]>} {
    const {engine, jobs, signal, stopAll} = options;
    const results: PromptRun[] = [];
    let next = 0;
    const submit = async (prompt: number): Promise<ChatRun> => {
        try {
            const run = await engine.submit(jobs[prompt], {...options.hooksOf(prompt), signal});
            // Awaited by its lane; a run withdrawn before that must not be an unhandled rejection.
            run.done.catch(() => {});
            return run;
        } catch (error) {
            // The others stop with the same error, so whichever settles first reports it.
            const refusal = options.toError(error, prompt);
            stopAll.abort(refusal);
            throw refusal;
        }
    };
    const lane = async (prompt: number, run: ChatRun): Promise<void> => {
        for (;;) {
            try {
                results[prompt] = {promptTokens: run.promptTokens, choices: await run.done};
            } catch (error) {
                stopAll.abort(error);
                throw error;
            }
            if (next >= jobs.length || signal.aborted)
                return;
            prompt = next++;
            run = await submit(prompt);
        }
    };

    const firstWave: Promise<[number, ChatRun]>[] = [];
    while (next < Math.min(Math.max(1, options.concurrency), jobs.length)) {
        const prompt = next++;
        firstWave.push(submit(prompt).then((run) => [prompt, run]));
    }
    const taken = Promise.all(firstWave);
    const started = taken.then(() => {});
    started.catch(() => {});
    return {
        started,
        results: taken.then((runs) => Promise.all(runs.map(([prompt, run]) => lane(prompt, run)))).then(() => {
            signal.throwIfAborted();
            return results;
        })
    };
}
