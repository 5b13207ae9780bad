import { Readable } from "node:stream";
import { setImmediate } from "node:timers/promises";

/**
 * Bytes written to a socket in pieces of about this size, one each time the socket wants more: one write of 9.5 MB had
 * the kernel copy several MB into the socket in one call on the main thread (tens of ms on a VM where new memory is slow).
 */
export const bodyPieceBytes = 256 * 1024;

/** Views of `bytes`, `bodyPieceBytes` each (the last shorter): nothing copied. */
export function* bodyPieces(bytes: Buffer): Generator<Buffer> {
    for (let start = 0; start < bytes.length; start += bodyPieceBytes)
        yield bytes.subarray(start, start + bodyPieceBytes);
}

/**
 * A response body of `pieces`, one handed to the socket per turn of the event loop. Written as fast as a loopback
 * client reads, every write of a stream completes at once and the next piece follows in the same turn: a 14 MB
 * token list held the main thread 20-37 ms at a time (`npm run bench:security`). Between two pieces, whatever else
 * waits (another request, a health check) runs.
 */
export function pacedBody(pieces: Iterable<Buffer>): Readable {
    return Readable.from((async function* () {
        let first = true;
        for (const piece of pieces) {
            if (!first)
                await setImmediate();
            first = false;
            yield piece;
        }
    })());
}

/** A response body of `bytes` written a piece at a time (bodyPieces, pacedBody); a small one as it is. */
export function piecewiseBody(bytes: Buffer): Buffer | Readable {
    return bytes.length <= bodyPieceBytes ? bytes : pacedBody(bodyPieces(bytes));
}
