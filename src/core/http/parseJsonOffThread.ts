import type { Worker } from "node:worker_threads";
import { passOffThreadGate } from "../workers/offThreadGate.js";
import { siblingModuleUrl } from "../workers/siblingModuleUrl.js";
import { putLongStrings, type MovedString } from "../workers/movedStrings.js";
import { ownedPieces } from "../workers/ownedPieces.js";
import { startModuleThread } from "../workers/startModuleThread.js";
import type { JsonHazard } from "./findJsonHazard.js";
import type { JsonBounds, ParseReply, ParseRequest } from "./jsonParseThreadMain.js";

/**
 * JSON.parse in a worker thread, for large request bodies: parsing (and decoding) a 10 MB body took
 * ~30 ms of the main thread, during which every other request waited; in the worker the main thread
 * only moves the bytes there (transferred, not copied, not even joined) and takes the parsed value back (a structured
 * clone, its long strings moved as bytes: movedStrings), or only its hazard (findJsonHazard: a body of too many values, too
 * deep, with a prototype key: the clone of a body of many values is slow). One worker (jsonParseThreadMain), started on first use, unref'd so
 * it never keeps the process alive.
 */
let worker: Worker | null = null;
let nextId = 0;
const pending = new Map<number, {resolve: (reply: ParseReply) => void, reject: (error: Error) => void}>();

function workerThread(): Worker {
    if (worker != null)
        return worker;
    const started = startModuleThread(siblingModuleUrl(import.meta.url, "./jsonParseThreadMain"));
    started.unref();
    started.on("message", (reply: ParseReply) => {
        const waiter = pending.get(reply.id);
        pending.delete(reply.id);
        if (pending.size === 0)
            started.unref();
        waiter?.resolve(reply);
    });
    const fail = (error: Error) => {
        for (const waiter of pending.values())
            waiter.reject(error);
        pending.clear();
        worker = null;
    };
    started.on("error", fail);
    started.on("exit", (code) => fail(new Error(`The JSON parse thread exited (${code})`)));
    worker = started;
    return started;
}

/**
 * Parses JSON text or UTF-8 JSON bytes (one piece, or the chunks a body arrived in, joined in the worker) in the worker: the
 * value, or its first hazard within `bounds`; rejects with a SyntaxError for text that is not JSON (or not UTF-8).
 * The pieces are moved to the worker, not copied: the caller does not use them afterwards.
 */
export async function parseJsonOffThread(pieces: string | Uint8Array | Uint8Array[], bounds: JsonBounds): Promise<{value: unknown} | {hazard: JsonHazard}> {
    const parsed = await parseJsonOffThreadMoving(pieces, bounds);
    return "hazard" in parsed ? parsed : {value: putLongStrings(parsed.value, parsed.strings)};
}

/**
 * parseJsonOffThread, its long strings left as the bytes they came back as (movedStrings): `value` holds "" in their
 * place until putLongStrings puts them back (a refused request need never make them again: jsonBody's `longStrings`).
 */
export async function parseJsonOffThreadMoving(pieces: string | Uint8Array | Uint8Array[], bounds: JsonBounds): Promise<{value: unknown, strings: MovedString[]} | {hazard: JsonHazard}> {
    await passOffThreadGate("json-parse");
    const thread = workerThread();
    const id = nextId++;
    const ask = (request: ParseRequest, transfer: ArrayBuffer[] = []) => new Promise<ParseReply>((resolve, reject) => {
        pending.set(id, {resolve, reject});
        thread.ref();
        thread.postMessage(request, transfer);
    });
    // A string is posted as it is (not encoded here first: that would be a second copy in fresh memory).
    const owned = typeof pieces === "string" ? {pieces, transfer: []} : ownedPieces(Array.isArray(pieces) ? pieces : [pieces]);
    const reply = await ask({id, pieces: owned.pieces, bounds}, owned.transfer);
    if ("error" in reply)
        throw new SyntaxError(reply.error);
    return "hazard" in reply ? {hazard: reply.hazard} : {value: reply.value, strings: reply.strings};
}
