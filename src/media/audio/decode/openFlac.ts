import { UndecodableAudioError } from "./audioRefusals.js";
import type { AudioChunk, AudioStream } from "./AudioStream.js";
import { decodeInSlices } from "./decodeInSlices.js";

/**
 * FLAC through @wasm-audio-decoders/flac (libFLAC). The STREAMINFO block that every FLAC file starts with
 * gives the rate and, unless the encoder left it 0 ("unknown", as a stream's is), the number of samples:
 * the length is known before decoding, and a file whose frames hold more than it declares (frames repeated
 * after the header was written) is refused as damaged rather than decoded on.
 */
export function openFlac(bytes: Uint8Array): AudioStream {
    const info = streamInfo(bytes);
    async function* chunks(): AsyncGenerator<AudioChunk> {
        let frames = 0;
        for await (const chunk of decodeInSlices("flac", bytes, async () => new (await import("@wasm-audio-decoders/flac")).FLACDecoder())) {
            frames += chunk.channels[0]?.length ?? 0;
            if (info != null && info.totalSamples > 0 && frames > info.totalSamples + info.maxBlockSize)
                throw new UndecodableAudioError(`The FLAC file holds more audio than its header declares (${info.totalSamples} samples at ${info.sampleRate} Hz).`);
            yield chunk;
        }
    }
    const seconds = info != null && info.totalSamples > 0 && info.sampleRate > 0 ? info.totalSamples / info.sampleRate : null;
    return {format: "flac", sampleRate: info?.sampleRate ?? null, seconds, exact: seconds != null, chunks: chunks()};
}

/** STREAMINFO, the first metadata block (after "fLaC"): rate (20 bits), total samples (36 bits, 0 = unknown), largest block. */
function streamInfo(bytes: Uint8Array): {sampleRate: number, totalSamples: number, maxBlockSize: number} | null {
    if (bytes.length < 8 + 34 || (bytes[4] & 0x7F) !== 0)
        return null;
    const view = new DataView(bytes.buffer, bytes.byteOffset + 8, 34);
    return {
        maxBlockSize: view.getUint16(2),
        sampleRate: view.getUint16(10) << 4 | view.getUint8(12) >> 4,
        totalSamples: (view.getUint8(13) & 0x0F) * 2 ** 32 + view.getUint32(14)
    };
}
