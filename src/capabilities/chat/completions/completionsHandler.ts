import crypto from "node:crypto";
import type { Middleware } from "koa";
import { compileRequestValidator } from "../../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../../Capability.js";
import type { PromptEcho } from "../ChatEngine.js";
import { chatTurnHandler } from "../turn/chatTurnHandler.js";
import { completionEvents } from "./completionEvents.js";
import { toCompletionsDone, toTextCompletion } from "./completionResponses.js";
import type { CompletionRequest } from "./CompletionWire.js";
import { completionSchema } from "./completionSchema.js";
import { runPrompts } from "./runPrompts.js";
import { toCompletionError } from "./toCompletionError.js";
import { toCompletionJobs } from "./toCompletionJobs.js";

/**
 * POST /v1/completions (OpenAI's legacy endpoint) on the chat models: each prompt is one chat-engine
 * job with a raw prompt (no template), run by runPrompts; the first ones are submitted before any
 * header goes out, so a prompt that does not fit, a full queue or too many choices is a plain 4xx/503.
 */
export function completionsHandler(context: RouteContext): Middleware {
    return chatTurnHandler(context, compileRequestValidator<CompletionRequest>(completionSchema), ({request, entry, engine, state}) => {
        const plan = toCompletionJobs(request, engine.info);
        Object.assign(state.logFields, {user: request.user ?? undefined, n: plan.n, prompts: plan.jobs.length});
        const envelope = {id: "cmpl-" + crypto.randomBytes(16).toString("base64url"), created: Math.floor(Date.now() / 1000), model: entry.id, systemFingerprint: engine.info.fingerprint};
        const echoes: (PromptEcho | null)[] = plan.jobs.map(() => null);
        return {
            stream: request.stream === true,
            run: (hooks) => {
                // One failing prompt stops the others.
                const stopAll = new AbortController();
                const {started, results} = runPrompts({
                    engine, jobs: plan.jobs, stopAll,
                    concurrency: Math.floor(engine.load().parallel / plan.bestOf),
                    signal: AbortSignal.any([state.signal, stopAll.signal]),
                    hooksOf: (prompt) => {
                        const streamed = hooks(prompt);
                        return {...streamed, onPrompt: (echo) => {
                            echoes[prompt] = echo;
                            streamed.onPrompt?.(echo);
                        }};
                    },
                    toError: (error, prompt) => toCompletionError(error, request, prompt)
                });
                return {started, done: results.then((runs) => toCompletionsDone(plan, runs, echoes))};
            },
            // Not streamed, the body is the stream's fold (its chunks discarded), with its usage chunk; but best_of's
            // candidates are not the answer's choices (the best n are chosen at the end, and cannot be streamed).
            body: plan.bestOf > plan.n ? ({outcomes}) => toTextCompletion(envelope, outcomes, plan.n, plan.logprobs != null) : undefined,
            events: completionEvents(envelope, plan, request.stream !== true || request.stream_options?.include_usage === true),
            terminator: "[DONE]"
        };
    }, {
        // Each prompt alone: `prompt` (a string) or `prompt[i]`; the refusal in this API's words, as runPrompts words it.
        textAt: (_body, path) => path[0] !== "prompt" ? null : path.length === 1 ? 0 : path.length === 2 && typeof path[1] === "number" ? path[1] : null,
        refuse: ({error, prompt, body}) => toCompletionError(error, body as unknown as CompletionRequest, prompt)
    });
}
