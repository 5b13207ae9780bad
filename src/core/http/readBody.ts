import type http from "node:http";
import type { Readable } from "node:stream";
import zlib from "node:zlib";
import { clipLogText } from "../../logger.js";
import { ApiError } from "./ApiError.js";
import type { BodyHold } from "./BodyMemory.js";
import { ClientDisconnectedError } from "./ClientDisconnectedError.js";

/** A body as it arrived: its chunks (each owning its own memory when read from the socket) and their total length. */
export type BodyChunks = {chunks: Uint8Array[], total: number};

/**
 * A request body's bytes, read into memory, as the chunks they arrived in (joining them is the caller's choice: a
 * large body is joined in the thread that parses it, since on the main thread the fresh memory of a 10 MB join
 * costs its page faults, 50-80 ms on a VM where each fault is slow): at most `limitBytes` of them (more: 413 naming
 * `limitText`), each chunk counted in `hold` as it is kept (a 503 at the chunk that does not fit,
 * see BodyMemory). `Content-Encoding: gzip`, `deflate` or `br` is decoded as it arrives, the limit and
 * the count applying to the decoded bytes; another encoding is a 415.
 *
 * Stopping early (a limit) leaves the request unread rather than destroyed, so the client gets its
 * answer: Node discards the rest of the body once the answer is sent, without keeping it.
 */
export async function readBody(request: http.IncomingMessage, limitBytes: number, limitText: string, hold: BodyHold): Promise<BodyChunks> {
    const decoder = decoderOf(request.headers["content-encoding"]);
    const source: Readable = decoder == null ? request : request.pipe(decoder);
    // A pipe passes on the body's end, not an abort: a client gone mid-body must end the decoder's reading too.
    const cut = () => {
        if (!request.complete)
            decoder?.destroy(new ClientDisconnectedError());
    };
    if (decoder != null)
        request.once("close", cut);
    const chunks: Buffer[] = [];
    let total = 0;
    try {
        for await (const chunk of source.iterator({destroyOnReturn: decoder != null}) as AsyncIterable<Buffer>) {
            total += chunk.length;
            if (total > limitBytes)
                throw ApiError.payloadTooLarge(limitText);
            hold.add(chunk.length);
            chunks.push(chunk);
        }
    } catch (error) {
        if (decoder != null && !(error instanceof ApiError) && !(error instanceof ClientDisconnectedError))
            throw ApiError.invalidRequest(`The request body could not be decoded as Content-Encoding '${clipLogText(String(request.headers["content-encoding"]), 100)}'.`,
                null, "invalid_encoding");
        throw error;
    } finally {
        if (decoder != null) {
            request.off("close", cut);
            request.unpipe(decoder);
        }
    }
    return {chunks, total};
}

/**
 * The chunks joined: a view of the joined bytes, not `new Uint8Array(buffer)`, which copies them again, element by
 * element (20-30 ms of the main thread for 7 MB).
 */
export function joinChunks({chunks, total}: BodyChunks): Uint8Array {
    const joined = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
    return new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength);
}

/** The decompressor of a Content-Encoding, or null for none (`identity`); a 415 for one the server does not know. */
function decoderOf(encoding: string | undefined) {
    switch ((encoding ?? "identity").trim().toLowerCase()) {
        case "identity":
        case "":
            return null;
        case "gzip":
        case "x-gzip":
        case "deflate":
            return zlib.createUnzip();
        case "br":
            return zlib.createBrotliDecompress();
        default:
            throw new ApiError(415, "invalid_request_error",
                `Unsupported Content-Encoding '${clipLogText(String(encoding), 100)}': send the body uncompressed, or as gzip, deflate or br.`, {code: "unsupported_media_type"});
    }
}
