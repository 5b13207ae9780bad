import { ascii } from "./ascii.js";
import type { AudioStream } from "./AudioStream.js";
import { decodeInSlices } from "./decodeInSlices.js";
import { oggLastGranule } from "./oggLastGranule.js";

/** Where the first page's packet (the codec's identification header) starts, in a file whose first page has one segment. */
const firstPacket = 28;

/**
 * Ogg Opus through ogg-opus-decoder (libopus; always 48 kHz) and Ogg Vorbis through @wasm-audio-decoders/ogg-vorbis
 * (libvorbis; the rate its identification header says). The last page's granule position tells the length up front.
 */
export function openOgg(bytes: Uint8Array, codec: "opus" | "vorbis"): AudioStream {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const granule = oggLastGranule(bytes);
    if (codec === "opus") {
        // OpusHead: version, channels, then the pre-skip (samples at 48 kHz dropped from the start).
        const preSkip = bytes.length >= firstPacket + 12 ? view.getUint16(firstPacket + 10, true) : 0;
        return {
            format: "ogg-opus", sampleRate: 48_000, seconds: granule == null ? null : Math.max(0, granule - preSkip) / 48_000, exact: false,
            chunks: decodeInSlices("ogg opus", bytes, async () => new (await import("ogg-opus-decoder")).OggOpusDecoder())
        };
    }
    // "\x01vorbis", version (4 bytes), channels (1), then the rate.
    const sampleRate = bytes.length >= firstPacket + 16 && ascii(bytes, firstPacket, 7) === "\u0001vorbis" ? view.getUint32(firstPacket + 12, true) : null;
    return {
        format: "ogg-vorbis", sampleRate, seconds: granule == null || !sampleRate ? null : granule / sampleRate, exact: false,
        chunks: decodeInSlices("ogg vorbis", bytes, async () => new (await import("@wasm-audio-decoders/ogg-vorbis")).OggVorbisDecoder())
    };
}
