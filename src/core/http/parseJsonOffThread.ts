import type { Worker } from "node:worker_threads";
import { passOffThreadGate } from "../workers/offThreadGate.js";
import { siblingModuleUrl } from "../workers/siblingModuleUrl.js";
import { startModuleThread } from "../workers/startModuleThread.js";
import type { JsonHazard } from "./findJsonHazard.js";
import type { JsonBounds, ParseReply } from "./jsonParseThreadMain.js";

/**
 * JSON.parse in a worker thread, for large request bodies: parsing (and decoding) a 10 MB body took
 * ~30 ms of the main thread, during which every other request waited; in the worker the main thread
 * only moves the bytes there (transferred, not copied) and takes the parsed value back (a structured
 * clone, a few ms for a long string), or only its hazard (findJsonHazard: a body of too many values, too
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
 * Parses UTF-8 JSON bytes in the worker: the value, or its first hazard within `bounds`; rejects with a
 * SyntaxError for text that is not JSON (or not UTF-8).
 */
export async function parseJsonOffThread(bytes: Uint8Array, bounds: JsonBounds): Promise<{value: unknown} | {hazard: JsonHazard}> {
    await passOffThreadGate("json-parse");
    const thread = workerThread();
    const id = nextId++;
    // Own buffer, moved to the worker (the caller does not use the bytes afterwards).
    const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
    const reply = await new Promise<ParseReply>((resolve, reject) => {
        pending.set(id, {resolve, reject});
        thread.ref();
        thread.postMessage({id, bytes: owned, bounds}, [owned.buffer as ArrayBuffer]);
    });
    if ("error" in reply)
        throw new SyntaxError(reply.error);
    return reply;
}
