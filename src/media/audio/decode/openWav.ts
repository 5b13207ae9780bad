import { ascii } from "./ascii.js";
import { UndecodableAudioError } from "./audioRefusals.js";
import type { AudioChunk, AudioStream } from "./AudioStream.js";

type WavFormat = {code: number, channels: number, sampleRate: number, bits: number};

/** Bytes of sample data read per piece. */
const pieceBytes = 2 ** 20;

/**
 * RIFF/WAVE with integer PCM (8-bit unsigned, 16/24/32-bit signed) or IEEE float (32/64-bit), any channel count,
 * read by hand. The header tells the rate and, from the data chunk's size, the exact length before any sample is read.
 */
export function openWav(bytes: Uint8Array): AudioStream {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    let format: WavFormat | null = null;
    for (let offset = 12; offset + 8 <= bytes.length;) {
        const id = ascii(bytes, offset, 4);
        const size = view.getUint32(offset + 4, true);
        const body = offset + 8;
        if (id === "fmt " && body + 16 <= bytes.length) {
            let code = view.getUint16(body, true);
            // WAVE_FORMAT_EXTENSIBLE: the real format is the first two bytes of the sub-format GUID.
            if (code === 0xFFFE && size >= 40 && body + 26 <= bytes.length)
                code = view.getUint16(body + 24, true);
            format = {code, channels: view.getUint16(body + 2, true), sampleRate: view.getUint32(body + 4, true), bits: view.getUint16(body + 14, true)};
        } else if (id === "data") {
            if (format == null)
                throw new UndecodableAudioError("The WAV file has no fmt chunk before its data.");
            // Streamed WAVs (ours among them) declare an unknown length: the data runs to the end of the file.
            const end = size === 0xFFFFFFFF || size === 0 || body + size > bytes.length ? bytes.length : body + size;
            return wavStream(view, body, end, format);
        }
        offset = body + size + (size % 2);
    }
    throw new UndecodableAudioError("The WAV file has no data chunk.");
}

function wavStream(view: DataView, start: number, end: number, format: WavFormat): AudioStream {
    const {code, channels, bits, sampleRate} = format;
    const read = code === 1 ? intReader(view, bits) : code === 3 && (bits === 32 || bits === 64)
        ? (offset: number) => bits === 32 ? view.getFloat32(offset, true) : view.getFloat64(offset, true) : null;
    if (read == null || channels < 1)
        throw new UndecodableAudioError(`The WAV file's encoding (format ${code}, ${bits} bits, ${channels} channels) is not supported: use PCM or float samples.`);
    const sampleBytes = bits / 8;
    const frameBytes = sampleBytes * channels;
    const frames = Math.floor((end - start) / frameBytes);
    const piece = Math.max(1, Math.floor(pieceBytes / frameBytes));
    async function* chunks(): AsyncGenerator<AudioChunk> {
        for (let first = 0; first < frames; first += piece) {
            const count = Math.min(piece, frames - first);
            const out = Array.from({length: channels}, () => new Float32Array(count));
            for (let frame = 0; frame < count; frame++)
                for (let channel = 0; channel < channels; channel++)
                    out[channel][frame] = read!(start + (first + frame) * frameBytes + channel * sampleBytes);
            yield {channels: out, sampleRate};
        }
    }
    return {format: "wav", sampleRate, seconds: sampleRate > 0 ? frames / sampleRate : null, exact: true, chunks: chunks()};
}

function intReader(view: DataView, bits: number): ((offset: number) => number) | null {
    switch (bits) {
        case 8: return (offset) => (view.getUint8(offset) - 128) / 128;
        case 16: return (offset) => view.getInt16(offset, true) / 0x8000;
        case 24: return (offset) => ((view.getUint8(offset + 2) << 24 | view.getUint8(offset + 1) << 16 | view.getUint8(offset) << 8) >> 8) / 0x800000;
        case 32: return (offset) => view.getInt32(offset, true) / 0x80000000;
        default: return null;
    }
}
