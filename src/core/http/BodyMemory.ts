import type http from "node:http";
import { ApiError } from "./ApiError.js";

/** Seconds a client is told to wait after a refusal: a stalled body is cut by the body timeout, others finish. */
const retryAfterSeconds = 2;

/**
 * The bytes request bodies hold in memory while they are received (JSON bodies and uploads, which are
 * never written to disk), server-wide, and their cap (`--max-body-memory`). Without it each of the
 * open connections could hold a whole body before the body timeout cut it: 512 stalled 25 MB uploads
 * are 12.8 GB.
 *
 * What is counted is what is actually buffered, chunk by chunk, as the readers keep it. A new body is
 * refused (503 with Retry-After) before a byte of it is read when its declared length (Content-Length)
 * does not fit beside what is held; a body that outgrows the room while it arrives (chunked, or
 * others grew meanwhile) is refused at the chunk that does not fit. Bytes are released when the
 * request's answer is complete or its connection closes (completion, refusal, client gone, body timeout).
 */
export class BodyMemory {
    #held = 0;

    constructor(readonly capacity: number) {}

    /** Bytes held now by the bodies of requests in flight. */
    get held(): number {
        return this.#held;
    }

    /**
     * Starts counting the body of `request`: a 503 when its declared length does not fit now. The
     * count is released when `response` closes.
     */
    admit(request: http.IncomingMessage, response: http.ServerResponse): BodyHold {
        if (this.#held + declaredLength(request) > this.capacity)
            throw this.#full();
        const hold = new BodyHold((bytes) => {
            if (this.#held + bytes > this.capacity)
                throw this.#full();
            this.#held += bytes;
        }, (bytes) => this.#held -= bytes);
        if (response.closed)
            hold.release();
        else
            response.once("close", () => hold.release());
        return hold;
    }

    #full() {
        return ApiError.overloaded(
            `The server is holding ${megabytes(this.#held)} of request bodies in memory, near its limit of ${megabytes(this.capacity)} ` +
            "(--max-body-memory): retry shortly.", retryAfterSeconds);
    }
}

/** The Content-Length of a body sent as it is (0 when unknown: chunked, or compressed, whose decoded size it is not). */
export function declaredLength(request: http.IncomingMessage): number {
    const encoding = (request.headers["content-encoding"] ?? "").trim().toLowerCase();
    const length = Number(request.headers["content-length"]);
    return (encoding === "" || encoding === "identity") && Number.isSafeInteger(length) && length > 0 ? length : 0;
}

function megabytes(bytes: number) {
    return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** One request body's share of `BodyMemory`. */
export class BodyHold {
    #bytes = 0;
    #total = 0;
    #released = false;

    constructor(private readonly grow: (bytes: number) => void, private readonly shrink: (bytes: number) => void) {}

    /** Counts `bytes` more buffered by this body: a 503 when they do not fit (nothing counted then). */
    add(bytes: number): void {
        if (this.#released)
            return;
        this.grow(bytes);
        this.#bytes += bytes;
        this.#total += bytes;
    }

    /** Every byte counted, released or not (the request's log line shows it). */
    get total(): number {
        return this.#total;
    }

    release(): void {
        if (this.#released)
            return;
        this.#released = true;
        this.shrink(this.#bytes);
        this.#bytes = 0;
    }
}
