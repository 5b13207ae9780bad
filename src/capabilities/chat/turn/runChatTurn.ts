import type { Context } from "koa";
import type { ApiError } from "../../../core/http/ApiError.js";
import type { RequestState } from "../../../core/http/RequestState.js";
import { SseWriter } from "../../../core/streaming/SseWriter.js";
import { streamResponse } from "../../../core/streaming/streamResponse.js";
import type { RouteContext } from "../../Capability.js";
import type { ChatRunHooks } from "../ChatEngine.js";

/**
 * At most two socket writes per this window (see SseWriter): a small model produces a token every
 * millisecond, and one write per token took CPU from the decoding thread.
 */
const tokenCoalesceMs = 8;

/** Hooks of one job of the turn (the legacy completions run a job per prompt). */
export type TurnHooks = (job: number) => Omit<ChatRunHooks, "signal">;

/** A turn's answer once every choice is done, with the tokens for the request's log line (and /metrics). */
export type TurnDone = {promptTokens: number, completionTokens: number};

/** One event of a format's stream: its data, and its name for the formats whose events are named. */
export type Send = (data: unknown, event?: string) => void;

/** A format's stream converter: engine events in, that format's events out. */
export type TurnStream<Done extends TurnDone> = {
    hooks: TurnHooks;
    /** Once the engine took the job(s), before any header: the opening events (`started` is what the turn's `started` resolved with). */
    taken?(started: unknown): void;
    /** The closing events once every choice is done; returns what the stream folds to (the body, when the turn has no `body`). */
    finish(done: Done): unknown;
    /** The event a failure after the headers is told in, when not the route's error shape in an `error` event (Responses' `response.failed`). */
    failure?: {event: string, body: (error: ApiError) => unknown};
};

/**
 * What a format (chat completions, completions, Responses, Messages) supplies for one request: how its job(s) run
 * and its pure pieces, the body and the stream converter. Everything else is the driver's (runChatTurn).
 */
export type ChatTurn<Done extends TurnDone> = {
    stream: boolean;
    /**
     * Submits the job(s) with these hooks: `started` settles once the engine took them (a refusal, a prompt too long or
     * a full queue, rejects it before any header goes out), `done` once every choice is done.
     */
    run(hooks: TurnHooks): {started: Promise<unknown>, done: Promise<Done>};
    /** An error of the chat path (toChatJob's checks, the engine's refusals) in the client's own field names; default as it is. */
    toClientError?: (error: unknown) => unknown;
    /**
     * The answer when not streamed. Absent: the fold of the stream (`events` run with its events discarded, the answer
     * its `finish` returns), so that body and stream cannot disagree.
     */
    body?(done: Done): unknown;
    /** The stream converter, when streamed (`send` writes one event). */
    events(send: Send): TurnStream<Done>;
    /** `data: [DONE]` after the last event (OpenAI's chat and completions streams). */
    terminator?: string;
};

/**
 * The one driver of a chat turn, whatever the format: runs the turn's job(s) and answers with the format's body (or the
 * fold of its stream), or streams its events (submitted before the headers, so a refusal is still a plain 4xx/503 in the route's error
 * shape; token writes coalesced; pings while quiet; a failure after the headers in the route's error shape too, or
 * the format's own failure event). Puts the time to the first token (streams) and the usage in the request's log
 * fields, which /metrics reads.
 */
export async function runChatTurn<Done extends TurnDone>(ctx: Context, context: RouteContext, turn: ChatTurn<Done>): Promise<void> {
    const state = ctx.state as RequestState;
    const logUsage = (done: Done) => {
        Object.assign(state.logFields, {prompt_tokens: done.promptTokens, completion_tokens: done.completionTokens});
        return done;
    };
    if (!turn.stream) {
        const fold = turn.body == null ? turn.events(() => {}) : null;
        const {started, done} = turn.run((job) => fold?.hooks(job) ?? {});
        done.catch(() => {});
        await inClientTerms(turn.toClientError, () => started.then((taken) => fold?.taken?.(taken)));
        const answer = logUsage(await done);
        ctx.body = fold != null ? fold.finish(answer) : turn.body!(answer);
        return;
    }

    // The converter's failure event, when it has one, is known once it is made (it may send its first events at once).
    let failure: TurnStream<Done>["failure"];
    const writer = new SseWriter(ctx, {
        pingMs: context.ssePingMs, coalesceMs: tokenCoalesceMs, terminator: turn.terminator,
        get errorEvent() {
            return failure?.event;
        },
        errorBody: (error) => failure != null ? failure.body(error) : state.shapeError?.(error).body ?? error.toBody()
    });
    const events = turn.events((data, event) => writer.send(data, event));
    failure = events.failure;
    const {started, done} = turn.run((job) => firstTokenTimed(state, events.hooks(job)));
    done.catch(() => {});
    // `taken` runs as soon as the engine took the job(s): its hooks are called only after that.
    await streamResponse(ctx, writer, {
        started: inClientTerms(turn.toClientError, () => started.then((taken) => events.taken?.(taken))),
        produce: async () => {
            events.finish(logUsage(await done));
        }
    });
}

/** `work` with what it throws (or its promise rejects with) told by `told`, in the client's own terms. */
export function inClientTerms<T>(told: ((error: unknown) => unknown) | undefined, work: () => T): T {
    if (told == null)
        return work();
    try {
        const result = work();
        return (result instanceof Promise ? result.catch((error) => {
            throw told(error);
        }) : result) as T;
    } catch (error) {
        throw told(error);
    }
}

/** The hooks with the request's time to first token (`ttft_ms`) taken at the first generated token. */
function firstTokenTimed(state: RequestState, hooks: Omit<ChatRunHooks, "signal">): Omit<ChatRunHooks, "signal"> {
    const firstToken = () => state.logFields.ttft_ms ??= Math.round(performance.now() - state.receivedAt);
    const {onText, onReasoning, onToolCall} = hooks;
    return {
        ...hooks,
        onText: (index, text, logprobs) => {
            if (text !== "" || (logprobs?.length ?? 0) > 0)
                firstToken();
            onText?.(index, text, logprobs);
        },
        onReasoning: onReasoning && ((index, text) => {
            firstToken();
            onReasoning(index, text);
        }),
        onToolCall: onToolCall && ((index, event, logprobs) => {
            firstToken();
            onToolCall(index, event, logprobs);
        })
    };
}
