import type { Context } from "koa";
import { ServerShutdownError } from "../http/ServerShutdownError.js";
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
 * 200) and rethrown so the error middleware logs it; a client that went away just ends it. When the
 * server's shutdown grace ends (ServerShutdownError), the stream gets its format's terminal error at once,
 * whether or not the engine has stopped yet, so the client can tell it from a network fault; it is logged
 * as `aborted="shutdown"`, not as a failure.
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
    const onAbort = () => {
        if (!(state.signal.reason instanceof ServerShutdownError))
            return;
        state.logFields.aborted = "shutdown";
        writer.fail(state.toApiError(state.signal.reason));
    };
    if (state.signal.aborted)
        onAbort();
    else
        state.signal.addEventListener("abort", onAbort, {once: true});
    try {
        await phases.produce(writer);
        writer.end();
    } catch (error) {
        if (state.signal.aborted) {
            // A shutdown's terminal error is out already (a writer ends once); a client that went away gets nothing.
            writer.close();
            return;
        }
        writer.fail(state.toApiError(error));
        throw error;
    } finally {
        state.signal.removeEventListener("abort", onAbort);
    }
}
