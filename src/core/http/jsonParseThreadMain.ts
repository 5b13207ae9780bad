import { parentPort } from "node:worker_threads";
import { findShapeViolation, type JsonShapeBounds, type JsonShapeViolation } from "./findShapeViolation.js";

/** What the main thread asks of the JSON parse thread (see parseJsonOffThread). */
export type ParseRequest = {id: number, bytes: Uint8Array, bounds: JsonShapeBounds};
/** The parsed value, or the bound it crosses (then the value stays here), or why it is not JSON. */
export type ParseReply = {id: number, value: unknown} | {id: number, violation: JsonShapeViolation} | {id: number, error: string};

/**
 * The JSON parse thread: decodes and parses large request bodies and checks their shape (findShapeViolation) here,
 * so that a body past its route's bounds never crosses to the main thread, where it would be rebuilt value by value.
 */
const decoder = new TextDecoder("utf-8", {fatal: true});
parentPort!.on("message", ({id, bytes, bounds}: ParseRequest) => {
    let reply: ParseReply;
    try {
        const value: unknown = JSON.parse(decoder.decode(bytes));
        const violation = findShapeViolation(value, bounds);
        reply = violation == null ? {id, value} : {id, violation};
    } catch (error) {
        reply = {id, error: String((error as Error)?.message ?? error)};
    }
    parentPort!.postMessage(reply);
});
