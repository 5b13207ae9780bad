import { finished } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { bodyPieceBytes, pacedBody, piecewiseBody } from "../../src/core/http/bodyPieces.js";

/** What ran, in order: each piece the body gives, and each turn of the event loop a piece's reader asked for (setImmediate). */
async function readInTurns(body: NodeJS.ReadableStream): Promise<{order: string[], bytes: Buffer}> {
    const order: string[] = [];
    const pieces: Buffer[] = [];
    body.on("data", (piece: Buffer) => {
        order.push(`piece ${piece.length}`);
        pieces.push(piece);
        setImmediate(() => order.push("turn"));
    });
    await finished(body as NodeJS.ReadableStream & {readable: boolean});
    await new Promise((resolve) => setImmediate(resolve));
    return {order, bytes: Buffer.concat(pieces)};
}

describe("pacedBody", () => {
    it("gives one piece per turn of the event loop: what waits behind a piece runs before the next", async () => {
        const {order} = await readInTurns(pacedBody([Buffer.alloc(3), Buffer.alloc(5), Buffer.alloc(7)]));
        expect(order).toEqual(["piece 3", "turn", "piece 5", "turn", "piece 7", "turn"]);
    });

    it("piecewiseBody: a large body in pieces of bodyPieceBytes, paced, the same bytes; a small one as it is", async () => {
        const bytes = Buffer.from(Array.from({length: 2 * bodyPieceBytes + 10}, (_, index) => index % 251));
        const {order, bytes: read} = await readInTurns(piecewiseBody(bytes) as NodeJS.ReadableStream);
        expect(order).toEqual([`piece ${bodyPieceBytes}`, "turn", `piece ${bodyPieceBytes}`, "turn", "piece 10", "turn"]);
        expect(read.equals(bytes)).toBe(true);
        const small = Buffer.from("small");
        expect(piecewiseBody(small)).toBe(small);
    });
});
