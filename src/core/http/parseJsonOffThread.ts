import { Worker } from "node:worker_threads";

/**
 * JSON.parse in a worker thread, for large request bodies: parsing (and decoding) a 10 MB body took
 * ~30 ms of the main thread, during which every other request waited; in the worker the main thread
 * only moves the bytes there (transferred, not copied) and takes the parsed value back (a structured
 * clone, a few ms for a long string). One worker, started on first use, unref'd so it never keeps the
 * process alive; plain JavaScript evaluated in the worker, so it runs the same from source and build.
 */
const source = `
const {parentPort} = require("node:worker_threads");
const decoder = new TextDecoder("utf-8", {fatal: true});
parentPort.on("message", ({id, bytes}) => {
    try {
        parentPort.postMessage({id, value: JSON.parse(decoder.decode(bytes))});
    } catch (error) {
        parentPort.postMessage({id, error: String(error && error.message || error)});
    }
});`;

let worker: Worker | null = null;
let nextId = 0;
const pending = new Map<number, {resolve: (value: unknown) => void, reject: (error: Error) => void}>();

function workerThread(): Worker {
    if (worker != null)
        return worker;
    const started = new Worker(source, {eval: true});
    started.unref();
    started.on("message", ({id, value, error}: {id: number, value?: unknown, error?: string}) => {
        const waiter = pending.get(id);
        pending.delete(id);
        if (pending.size === 0)
            started.unref();
        if (error != null)
            waiter?.reject(new SyntaxError(error));
        else
            waiter?.resolve(value);
    });
    started.on("error", (error) => {
        for (const waiter of pending.values())
            waiter.reject(error);
        pending.clear();
        worker = null;
    });
    started.on("exit", () => {
        worker = null;
    });
    worker = started;
    return started;
}

/** Parses UTF-8 JSON bytes in the worker; rejects with a SyntaxError for text that is not JSON (or not UTF-8). */
export function parseJsonOffThread(bytes: Uint8Array): Promise<unknown> {
    const thread = workerThread();
    const id = nextId++;
    // Own buffer, moved to the worker (the caller does not use the bytes afterwards).
    const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
    return new Promise((resolve, reject) => {
        pending.set(id, {resolve, reject});
        thread.ref();
        thread.postMessage({id, bytes: owned}, [owned.buffer as ArrayBuffer]);
    });
}
