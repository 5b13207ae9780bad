import type { ApiError } from "./ApiError.js";
import type { UploadedFile } from "./UploadedFile.js";

/** What the request-context middleware puts on `ctx.state` for the handlers. */
export type RequestState = {
    requestId: string;
    /** Aborted when the client goes away or the server shuts down. */
    signal: AbortSignal;
    /**
     * Extra fields for the request's log line (model, user, tokens). /metrics reads `model`,
     * `prompt_tokens`, `completion_tokens` and `ttft_ms` from here, for every endpoint.
     */
    logFields: Record<string, unknown>;
    /** The server's one error mapping (shared and every capability's), for errors that travel inside a stream. */
    toApiError: (error: unknown) => ApiError;
    /**
     * An error as the route that matched answers it (OpenAI's shape, or another API's: a capability's `errorShapes`),
     * set by the error middleware: the one decision a stream's in-band error event follows too.
     */
    shapeError?: (error: ApiError) => {status: number, body: unknown, headers?: Record<string, string>};
    /**
     * The identity of the API key the request authenticated with: its hash (as the keys file stores it), not its
     * name, so that what a key owns (stored responses) is not handed to a new key given a revoked key's name.
     * Absent on a server without keys.
     */
    keyHash?: string;
    /** That key's role (docs/security.md "Roles"); absent on a server without keys, where everything is allowed. */
    keyRole?: "user" | "admin";
    /** performance.now() when the request arrived (time to first token is measured from it). */
    receivedAt: number;
    /** The files of a multipart body, once `RouteContext.multipartBody` parsed it. */
    files?: UploadedFile[];
    /**
     * A JSON body's long strings (movedStrings: 512 K characters or more) while they are still the bytes the parse
     * thread sent: where each is, its length (UTF-16 code units), and the body with "" in their place. Only
     * until `ctx.request.body` is first read, which makes them strings again (in that same value; jsonBody): a route
     * that can refuse a request from their sizes alone (the prompt floor: earlyPromptFloor) looks here first, and a
     * refused 10 MB prompt is never made a string on the main thread.
     */
    longStrings?: {value: unknown, strings: readonly {path: readonly (string | number)[], length: number}[]};
};
