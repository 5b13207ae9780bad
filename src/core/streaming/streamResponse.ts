import type { Context } from "koa";
import type { RequestState } from "../http/RequestState.js";
import type { ResponseWriter } from "./ResponseWriter.js";

/**
 * Runs a streamed response once its headers are out: `produce` writes to `writer`; success ends
 * the response; a failure is reported inside it (the status is already 200) and rethrown so the
 * error middleware logs it; a client that went away (or a shutdown) just ends it.
 */
export async function streamResponse<W extends ResponseWriter>(ctx: Context, writer: W, produce: (writer: W) => Promise<void>): Promise<void> {
    const state = ctx.state as RequestState;
    try {
        await produce(writer);
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
