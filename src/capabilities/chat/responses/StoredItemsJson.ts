import { bodyPieceBytes, bodyPieces } from "../../../core/http/bodyPieces.js";
const comma = Buffer.from(",");

/** A read is written in pieces of about this size (bodyPieces): reversed, small items are copied into such pieces; a large item and the whole in order are cut into views. */
const pieceBytes = bodyPieceBytes;

/**
 * A stored response's input items as JSON, serialized once when it is stored: one buffer of the items' JSON joined by
 * commas, in input order, and where each item starts. A read writes it as it is (oldest first), or reversed in
 * pieces of about 256 KB made as the socket takes them, so that no read serializes anything again nor copies
 * everything at once, whatever the items' number and size.
 */
export class StoredItemsJson {
    private constructor(readonly bytes: Buffer, private readonly starts: number[]) {}

    static of(items: readonly unknown[]): StoredItemsJson {
        const texts = items.map((item) => JSON.stringify(item));
        const starts: number[] = [];
        let at = 0;
        for (const text of texts) {
            starts.push(at);
            at += Buffer.byteLength(text) + 1;
        }
        return new StoredItemsJson(Buffer.from(texts.join(",")), starts);
    }

    /** The items' JSON joined by commas, oldest first or newest first, in pieces of about 256 KB (views of an item of that size or more, not copies). */
    *joined(oldestFirst: boolean): Generator<Buffer> {
        if (oldestFirst) {
            yield* bodyPieces(this.bytes);
            return;
        }
        let piece: Buffer[] = [];
        let size = 0;
        for (let index = this.starts.length - 1; index >= 0; index--) {
            const item = this.bytes.subarray(this.starts[index], index + 1 < this.starts.length ? this.starts[index + 1] - 1 : this.bytes.length);
            const parts = index > 0 ? [item, comma] : [item];
            if (item.length >= pieceBytes && size > 0) {
                yield Buffer.concat(piece, size);
                piece = [];
                size = 0;
            }
            piece.push(...parts);
            size += item.length + parts.length - 1;
            if (size >= pieceBytes) {
                if (item.length >= pieceBytes)
                    for (const part of piece)
                        yield* bodyPieces(part);
                else
                    yield Buffer.concat(piece, size);
                piece = [];
                size = 0;
            }
        }
        if (size > 0)
            yield Buffer.concat(piece, size);
    }
}
