import { parentPort } from "node:worker_threads";
import type { AudioEncoder } from "./AudioEncoder.js";
import type { AudioFormat } from "./audioFormats.js";
import { createAudioEncoder, type AudioEncoderOptions } from "./createAudioEncoder.js";

/** What the main thread asks of the encoder thread (see OffThreadAudioEncoder). */
export type EncoderRequest =
    | {call: number, type: "create", session: number, format: AudioFormat, options: AudioEncoderOptions}
    | {call: number, type: "push", session: number, samples: Float32Array}
    | {call: number, type: "end", session: number};

export type EncoderReply =
    | {call: number, ok: true, bytes?: Uint8Array, contentType?: string, sampleRate?: number}
    | {call: number, ok: false, error: string};

/**
 * The audio encoder thread: holds the encoders of every response being encoded (one session each) and
 * runs their codecs (lamejs, libopus and libFLAC in WebAssembly, the resamplers) here, off the main thread.
 * Calls of one session arrive in order and are answered in order.
 */
const sessions = new Map<number, AudioEncoder>();
// One session's calls run one after another (an encoder is stateful); sessions interleave.
const queues = new Map<number, Promise<void>>();

parentPort!.on("message", (request: EncoderRequest) => {
    const previous = queues.get(request.session) ?? Promise.resolve();
    const next = previous.then(() => handle(request)).then((reply) => {
        const transfer = reply.ok && reply.bytes != null ? [reply.bytes.buffer as ArrayBuffer] : [];
        parentPort!.postMessage(reply, transfer);
    });
    queues.set(request.session, next);
    void next.finally(() => {
        if (queues.get(request.session) === next)
            queues.delete(request.session);
    });
});

async function handle(request: EncoderRequest): Promise<EncoderReply> {
    try {
        if (request.type === "create") {
            const encoder = await createAudioEncoder(request.format, request.options);
            sessions.set(request.session, encoder);
            return {call: request.call, ok: true, contentType: encoder.contentType, sampleRate: encoder.sampleRate};
        }
        const encoder = sessions.get(request.session);
        if (encoder == null)
            throw new Error(`No encoder session ${request.session}`);
        if (request.type === "push")
            return {call: request.call, ok: true, bytes: own(await encoder.push(request.samples))};
        sessions.delete(request.session);
        return {call: request.call, ok: true, bytes: own(await encoder.end())};
    } catch (error) {
        return {call: request.call, ok: false, error: error instanceof Error ? error.message : String(error)};
    }
}

/** Bytes in a buffer of their own, so they can be moved (not copied) to the main thread. */
function own(bytes: Uint8Array): Uint8Array {
    return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
}
