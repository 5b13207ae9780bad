import { UndecodableAudioError } from "./audioRefusals.js";
import type { AudioChunk } from "./AudioStream.js";

/** What wasm-audio-decoders' decoders (mpg123, libFLAC, libopus, libvorbis builds) give back for some input. */
export type WasmDecoded = {channelData: Float32Array[], sampleRate: number, samplesDecoded: number, errors: readonly {message: string}[]};

/** Their streaming API: bytes in, whatever frames they complete out; `flush` the rest at the end; `free` their WebAssembly memory. */
export type StreamingDecoder = {
    ready: Promise<void>;
    decode(bytes: Uint8Array): WasmDecoded | Promise<WasmDecoded>;
    flush?(): Promise<WasmDecoded>;
    free(): void;
};

/** Decoded values (frames x channels) a slice should give: about 8 MB of floats, however compressed the file. */
const targetValues = 2 ** 21;
const firstSliceBytes = 4096;
const minSliceBytes = 256;
const maxSliceBytes = 2 ** 20;

/**
 * Feeds a streaming decoder the file a slice at a time and yields each slice's audio, so the caller checks its
 * limits and the request's cancellation between slices. Slices are sized from the ratio decoded so far to give
 * about `targetValues` each: a few hundred bytes of a file that decodes to hours (silence, tiny Opus packets)
 * never become more than a few megabytes of samples at once, while an ordinary file goes in large slices.
 * The decoders' own exceptions (WebAssembly aborts on damaged data) become UndecodableAudioError. The decoder
 * (made by `create`, loaded on first use) is freed however the loop ends: done, refused or cancelled.
 */
export async function* decodeInSlices(format: string, bytes: Uint8Array, create: () => Promise<StreamingDecoder>): AsyncGenerator<AudioChunk> {
    const decoder = await create();
    await decoder.ready;
    try {
        yield* slices(format, bytes, decoder);
    } finally {
        decoder.free();
    }
}

async function* slices(format: string, bytes: Uint8Array, decoder: StreamingDecoder): AsyncGenerator<AudioChunk> {
    const run = async (decode: () => WasmDecoded | Promise<WasmDecoded>): Promise<AudioChunk> => {
        try {
            const {channelData, samplesDecoded, sampleRate, errors} = await decode();
            return {channels: channelData.map((channel) => channel.subarray(0, samplesDecoded)), sampleRate, error: errors[0]?.message};
        } catch (error) {
            throw new UndecodableAudioError(`The ${format} data could not be decoded (${(error as Error).message}).`);
        }
    };
    let values = 0;
    let size = firstSliceBytes;
    for (let offset = 0; offset < bytes.length;) {
        const slice = bytes.subarray(offset, offset + size);
        offset += slice.length;
        const chunk = await run(() => decoder.decode(slice));
        values += (chunk.channels[0]?.length ?? 0) * chunk.channels.length;
        yield chunk;
        size = values === 0 ? Math.min(maxSliceBytes, size * 2)
            : Math.max(minSliceBytes, Math.min(maxSliceBytes, Math.floor(targetValues * offset / values)));
    }
    if (decoder.flush != null)
        yield await run(() => decoder.flush!());
}
