import type { Worker } from "node:worker_threads";
import { siblingModuleUrl } from "../../core/workers/siblingModuleUrl.js";
import { startModuleThread } from "../../core/workers/startModuleThread.js";
import type { AudioEncoder } from "./AudioEncoder.js";
import type { EncoderReply, EncoderRequest } from "./audioEncoderThreadMain.js";
import type { AudioFormat } from "./audioFormats.js";
import type { AudioEncoderOptions } from "./createAudioEncoder.js";

type WithoutCall<T> = T extends unknown ? Omit<T, "call"> : never;
type Pending = {resolve: (reply: EncoderReply & {ok: true}) => void, reject: (error: Error) => void};

/** The one encoder thread, started on first use, unref'd while idle so it never keeps the process alive. */
let thread: Worker | null = null;
const pending = new Map<number, Pending>();
let nextCall = 0;
let nextSession = 0;

function encoderThread(): Worker {
    if (thread != null)
        return thread;
    const started = startModuleThread(siblingModuleUrl(import.meta.url, "./audioEncoderThreadMain"));
    started.unref();
    started.on("message", (reply: EncoderReply) => {
        const waiter = pending.get(reply.call);
        pending.delete(reply.call);
        if (pending.size === 0)
            started.unref();
        if (reply.ok)
            waiter?.resolve(reply);
        else
            waiter?.reject(new Error(reply.error));
    });
    const fail = (error: Error) => {
        for (const waiter of pending.values())
            waiter.reject(error);
        pending.clear();
        thread = null;
    };
    started.on("error", fail);
    started.on("exit", (code) => fail(new Error(`The audio encoder thread exited (${code})`)));
    thread = started;
    return started;
}

function call(request: WithoutCall<EncoderRequest>, transfer: ArrayBuffer[] = []): Promise<EncoderReply & {ok: true}> {
    const worker = encoderThread();
    const id = nextCall++;
    return new Promise((resolve, reject) => {
        pending.set(id, {resolve, reject});
        worker.ref();
        worker.postMessage({...request, call: id} as EncoderRequest, transfer);
    });
}

/**
 * An AudioEncoder whose codec runs in the encoder thread (audioEncoderThreadMain): `push` moves the samples
 * there and the encoded bytes back (transferred, not copied), so mp3, opus and flac encoding never takes the
 * main thread, where chat streams its tokens. Same contract as createAudioEncoder's encoders.
 */
export async function createOffThreadAudioEncoder(format: AudioFormat, options: AudioEncoderOptions): Promise<AudioEncoder> {
    const session = nextSession++;
    const created = await call({type: "create", session, format, options});
    let ended = false;
    return {
        contentType: created.contentType!,
        sampleRate: created.sampleRate!,
        async push(samples: Float32Array) {
            if (ended)
                throw new Error("The encoder has ended");
            // A copy of its own to move (the caller may still read its samples).
            const owned = samples.slice();
            return (await call({type: "push", session, samples: owned}, [owned.buffer as ArrayBuffer])).bytes ?? new Uint8Array(0);
        },
        async end() {
            if (ended)
                return new Uint8Array(0);
            ended = true;
            return (await call({type: "end", session})).bytes ?? new Uint8Array(0);
        }
    };
}
