import type { Context } from "koa";
import type { RequestState } from "../http/RequestState.js";
import type { ResponseWriter } from "./ResponseWriter.js";

/** The two phases of a streamed response. */
export type StreamPhases<W extends ResponseWriter> = {
    /**
     * The start phase: nothing is sent until this settles. It resolves with the first result (speech's
     * first sentence, an image's first step) or, for token streams, once the engine took the job (its
     * refusals, a full queue or a prompt too long, are synchronous; a queued request then gets pings);
     * a rejection is a refusal, answered as a plain JSON error with its own status, and nothing else is sent.
     */
    started: Promise<unknown>;
    /** Writes the rest; the response ends when it resolves. */
    produce: (writer: W) => Promise<void>;
};

/**
 * The one place that decides when a streamed response's headers go out: after the start phase (see
 * StreamPhases.started), `writer.open()` sends them with whatever the engine already produced; then
 * `produce` streams. A failure after the headers is reported inside the response (the status is already
 * 200) and rethrown so the error middleware logs it; a client that went away (or a shutdown) just ends it.
 */
export async function streamResponse<W extends ResponseWriter>(ctx: Context, writer: W, phases: StreamPhases<W>): Promise<void> {
    const state = ctx.state as RequestState;
    try {
        await phases.started;
    } catch (error) {
        writer.close();
        throw error;
    }
    writer.open();
    try {
        await phases.produce(writer);
        writer.end();
    } catch (error) {
        if (state.signal.aborted) {
            writer.close();
            return;
        }
        writer.fail(state.toApiError(error));
        throw error;
    }
}
