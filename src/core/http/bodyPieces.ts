import { Readable } from "node:stream";

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

/** A response body of `bytes` written a piece at a time (bodyPieces); a small one as it is. */
export function piecewiseBody(bytes: Buffer): Buffer | Readable {
    return bytes.length <= bodyPieceBytes ? bytes : Readable.from(bodyPieces(bytes));
}
