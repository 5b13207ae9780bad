import { parentPort } from "node:worker_threads";
import { lowerThreadPriority } from "../workers/lowerThreadPriority.js";
import { joinPieces } from "../workers/ownedPieces.js";
import { findJsonHazard, type JsonHazard } from "./findJsonHazard.js";
import { takeLongStrings, type LongString } from "./longStrings.js";

/** Bounds a route puts on a JSON body's shape (see findJsonHazard). */
export type JsonBounds = {maxDepth: number, maxValues: number};
/** What the main thread asks of the JSON parse thread (see parseJsonOffThread): a body to parse, or the next piece of a long string. */
export type ParseRequest = {id: number, pieces: string | Uint8Array[], bounds: JsonBounds} | {id: number, next: true};
/**
 * The parsed value (its long strings left empty, each then sent in pieces, one per `next`), or its first hazard (then
 * the value stays here), or why it is not JSON; or a piece of a long string.
 */
export type ParseReply =
    | {id: number, value: unknown, long: LongString[]}
    | {id: number, hazard: JsonHazard}
    | {id: number, error: string}
    | {id: number, piece: string};

/**
 * The JSON parse thread: decodes and parses large request bodies and looks for their hazards (findJsonHazard)
 * here, so that a body past its route's bounds never crosses to the main thread, where it would be rebuilt value
 * by value. Long strings cross in pieces, one message each, the next sent when the main thread asks for it: a 10 MB
 * string rebuilt there at once is 10 MB of fresh memory, whose page faults held the main thread 50-80 ms on a VM
 * where each is slow; a piece is a few milliseconds, between which the main thread serves other requests.
 */
lowerThreadPriority();
const decoder = new TextDecoder("utf-8", {fatal: true});
/** The pieces still to send, per body. */
const unsent = new Map<number, string[]>();
parentPort!.on("message", (request: ParseRequest) => {
    const {id} = request;
    if ("next" in request) {
        const pieces = unsent.get(id) ?? [];
        const piece = pieces.shift();
        if (pieces.length === 0)
            unsent.delete(id);
        if (piece != null)
            parentPort!.postMessage({id, piece} satisfies ParseReply);
        return;
    }
    let reply: ParseReply;
    try {
        const {pieces, bounds} = request;
        const value: unknown = JSON.parse(typeof pieces === "string" ? pieces : decoder.decode(joinPieces(pieces)));
        const hazard = findJsonHazard(value, bounds.maxDepth, bounds.maxValues);
        if (hazard == null) {
            const long = takeLongStrings(value);
            if (long.strings.length > 0)
                unsent.set(id, long.pieces);
            reply = {id, value, long: long.strings};
        } else
            reply = {id, hazard};
    } catch (error) {
        reply = {id, error: String((error as Error)?.message ?? error)};
    }
    parentPort!.postMessage(reply);
});
