import type { ChatEngine, ChatJob, ChatRun, ChoiceResult } from "../ChatEngine.js";
import type { TurnDone, TurnHooks } from "./runChatTurn.js";

/** One job's answer: its choices, and the tokens of them all. */
export type JobDone = TurnDone & {choices: ChoiceResult[]};

/** A turn of one job (chat completions, Responses, Messages): `started` with the engine's run once it took the job. */
export function runJob(engine: ChatEngine, job: ChatJob, signal: AbortSignal, hooks: TurnHooks): {started: Promise<ChatRun>, done: Promise<JobDone>} {
    const started = engine.submit(job, {...hooks(0), signal});
    const done = started.then(async (run) => {
        const choices = await run.done;
        return {promptTokens: run.promptTokens, completionTokens: choices.reduce((sum, choice) => sum + choice.completionTokens, 0), choices};
    });
    return {started, done};
}
