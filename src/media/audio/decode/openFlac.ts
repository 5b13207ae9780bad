import { UndecodableAudioError } from "./audioRefusals.js";
import type { AudioChunk, AudioStream } from "./AudioStream.js";
import { decodeInSlices } from "./decodeInSlices.js";
import { flacFramesTotal } from "./flacFramesTotal.js";

/**
 * FLAC through @wasm-audio-decoders/flac (libFLAC). The STREAMINFO block that every FLAC file starts with
 * gives the rate and, unless the encoder left it 0 ("unknown", as a stream's is), the number of samples; when it
 * is 0, the last frame headers say it (flacFramesTotal). So the length is known before decoding, and a file whose
 * frames hold more than it declares (frames repeated after the header was written) is refused as damaged rather
 * than decoded on.
 */
export function openFlac(bytes: Uint8Array): AudioStream {
    const info = streamInfo(bytes);
    const framesStart = info == null ? null : metadataEnd(bytes);
    const fromFrames = info != null && info.totalSamples === 0 && framesStart != null ? flacFramesTotal(bytes, info.maxBlockSize, framesStart) : null;
    const totalSamples = fromFrames ?? info?.totalSamples ?? 0;
    const declaredBy = fromFrames != null ? "its frames declare" : "its header declares";
    async function* chunks(): AsyncGenerator<AudioChunk> {
        let frames = 0;
        for await (const chunk of decodeInSlices("flac", bytes, async () => new (await import("@wasm-audio-decoders/flac")).FLACDecoder())) {
            frames += chunk.channels[0]?.length ?? 0;
            if (totalSamples > 0 && frames > totalSamples + info!.maxBlockSize)
                throw new UndecodableAudioError(`The FLAC file holds more audio than ${declaredBy} (${totalSamples} samples at ${info!.sampleRate} Hz).`);
            yield chunk;
        }
    }
    const seconds = totalSamples > 0 && info!.sampleRate > 0 ? totalSamples / info!.sampleRate : null;
    return {format: "flac", sampleRate: info?.sampleRate ?? null, seconds, exact: seconds != null, chunks: chunks()};
}

/** Where the frames start: after "fLaC" and its metadata blocks (the last one flagged); null past the end. */
function metadataEnd(bytes: Uint8Array): number | null {
    let offset = 4;
    while (offset + 4 <= bytes.length) {
        const last = (bytes[offset] & 0x80) !== 0;
        offset += 4 + (bytes[offset + 1] << 16 | bytes[offset + 2] << 8 | bytes[offset + 3]);
        if (last)
            return offset <= bytes.length ? offset : null;
    }
    return null;
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
