import type { AudioEncoder } from "./AudioEncoder.js";
import { concatBytes } from "./concatBytes.js";
import { loadLibFlac, type LibFlac } from "./loadLibFlac.js";
import { toInt16 } from "./toInt16.js";

const compressionLevel = 5;
/** Byte offset of the STREAMINFO block's body: after "fLaC" and the 4-byte metadata block header. */
const streamInfoOffset = 8;

/**
 * FLAC (libFLAC via libflacjs), 16-bit mono at the model's own rate; frames go out as libFLAC completes them
 * (every 4096 samples at level 5). libFLAC writes STREAMINFO first, before it knows the length, with total samples,
 * frame sizes and MD5 left 0, which the format defines as "unknown": that is what a stream gets.
 * Not streaming, the whole file is held and STREAMINFO is completed from libFLAC's final metadata.
 */
export async function createFlacEncoder(sampleRate: number, streaming: boolean): Promise<AudioEncoder> {
    const flac = await loadLibFlac();
    const encoder = flac.create_libflac_encoder(sampleRate, 1, 16, compressionLevel, 0, false, 0);
    if (encoder === 0) throw new Error(`libFLAC could not create an encoder for ${sampleRate} Hz`);
    let written: Uint8Array[] = [];
    let streamInfo: StreamInfo | undefined;
    const status = flac.init_encoder_stream(
        encoder,
        data => void written.push(data.slice()),
        metadata => void (streamInfo = metadata)
    );
    if (status !== 0) {
        flac.FLAC__stream_encoder_delete(encoder);
        throw new Error(`libFLAC encoder init failed with status ${status}`);
    }
    const take = () => {
        const bytes = concatBytes(written);
        written = [];
        return bytes;
    };
    return {
        contentType: "audio/flac",
        sampleRate,
        async push(samples) {
            process(flac, encoder, samples);
            return streaming ? take() : new Uint8Array(0);
        },
        async end() {
            const finished = flac.FLAC__stream_encoder_finish(encoder);
            flac.FLAC__stream_encoder_delete(encoder);
            if (!finished) throw new Error("libFLAC failed to finish the stream");
            const bytes = take();
            if (!streaming && streamInfo) completeStreamInfo(bytes, streamInfo);
            return bytes;
        }
    };
}

type StreamInfo = {min_framesize: number; max_framesize: number; total_samples: number; md5sum: string};

function process(flac: LibFlac, encoder: number, samples: Float32Array) {
    if (samples.length === 0) return;
    const ok = flac.FLAC__stream_encoder_process_interleaved(encoder, Int32Array.from(toInt16(samples)), samples.length);
    if (!ok) throw new Error("libFLAC failed to encode samples");
}

/** Writes the values libFLAC only knows at the end into the STREAMINFO at the start of a complete file. */
function completeStreamInfo(file: Uint8Array, info: StreamInfo) {
    const view = new DataView(file.buffer, file.byteOffset + streamInfoOffset, 34);
    const setUint24 = (offset: number, value: number) => {
        view.setUint8(offset, value >>> 16);
        view.setUint16(offset + 1, value & 0xFFFF);
    };
    setUint24(4, info.min_framesize);
    setUint24(7, info.max_framesize);
    // Total samples: the low 4 bits of byte 13 and the 4 bytes after it (36 bits; speech never needs more than 32).
    view.setUint8(13, (view.getUint8(13) & 0xF0) | Math.floor(info.total_samples / 2 ** 32));
    view.setUint32(14, info.total_samples >>> 0);
    for (let i = 0; i < 16; i++) view.setUint8(18 + i, parseInt(info.md5sum.slice(2 * i, 2 * i + 2), 16));
}
