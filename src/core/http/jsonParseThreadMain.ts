import { parentPort } from "node:worker_threads";
import { lowerThreadPriority } from "../workers/lowerThreadPriority.js";
import { joinPieces } from "../workers/ownedPieces.js";
import { takeLongStrings, type MovedString } from "../workers/movedStrings.js";
import { findJsonHazard, type JsonHazard } from "./findJsonHazard.js";

/** Bounds a route puts on a JSON body's shape (see findJsonHazard). */
export type JsonBounds = {maxDepth: number, maxValues: number, /** Top-level fields' array bounds (findJsonHazard). */ maxItems?: Readonly<Record<string, number>>,
    /** Top-level fields' bounds on the values they hold (findJsonHazard). */ maxFieldValues?: Readonly<Record<string, number>>};
/** What the main thread asks of the JSON parse thread (see parseJsonOffThread): JSON text, or its UTF-8 bytes in pieces. */
export type ParseRequest = {id: number, pieces: string | Uint8Array[], bounds: JsonBounds};
/** The parsed value (its long strings moved as bytes: movedStrings), or its first hazard (then the value stays here), or why it is not JSON. */
export type ParseReply = {id: number, value: unknown, strings: MovedString[]} | {id: number, hazard: JsonHazard} | {id: number, error: string};

/**
 * The JSON parse thread: joins, decodes and parses large request bodies and looks for their hazards (findJsonHazard)
 * here, so that a body past its route's bounds never crosses to the main thread, where it would be rebuilt value
 * by value.
 */
lowerThreadPriority();
const decoder = new TextDecoder("utf-8", {fatal: true});
parentPort!.on("message", ({id, pieces, bounds}: ParseRequest) => {
    let reply: ParseReply;
    let transfer: ArrayBuffer[] = [];
    try {
        const parsed: unknown = JSON.parse(typeof pieces === "string" ? pieces : decoder.decode(joinPieces(pieces)));
        const hazard = findJsonHazard(parsed, bounds.maxDepth, bounds.maxValues, bounds.maxItems, bounds.maxFieldValues);
        if (hazard == null) {
            const {value, strings, transfer: buffers} = takeLongStrings(parsed);
            reply = {id, value, strings};
            transfer = buffers;
        } else
            reply = {id, hazard};
    } catch (error) {
        reply = {id, error: String((error as Error)?.message ?? error)};
    }
    parentPort!.postMessage(reply, transfer);
});
