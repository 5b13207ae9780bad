import { FLACDecoder } from "@wasm-audio-decoders/flac";
import type { AudioFormat } from "../../src/media/audio/audioFormats.js";
import { decodeLossy } from "../unit/media/audio/decodeLossy.js";

export type DecodedSpeech = {
    samples: Float32Array;
    sampleRate: number;
    channels: number;
    /** WAV: the RIFF and data sizes the header declares; FLAC: STREAMINFO's total samples (0 = unknown). */
    declared?: {riffSize?: number, dataSize?: number, totalSamples?: number};
};

/** The response bytes of any `response_format`, decoded by hand (wav, pcm) or by an independent decoder from npm. */
export async function decodeSpeech(format: AudioFormat, bytes: Uint8Array): Promise<DecodedSpeech> {
    switch (format) {
        case "wav": return parseWav(bytes);
        case "pcm": return {samples: pcm16ToFloat(bytes), sampleRate: 24_000, channels: 1};
        case "flac": return decodeFlac(bytes);
        default: return decodeLossy(format, bytes);
    }
}

/** A by-hand RIFF/WAVE reader (16-bit PCM only). */
export function parseWav(bytes: Uint8Array): DecodedSpeech {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const text = (offset: number) => String.fromCharCode(...bytes.subarray(offset, offset + 4));
    if (text(0) !== "RIFF" || text(8) !== "WAVE")
        throw new Error("not a RIFF/WAVE file");
    let offset = 12;
    let format: {audioFormat: number, channels: number, sampleRate: number, bitsPerSample: number} | undefined;
    while (offset + 8 <= bytes.length) {
        const id = text(offset);
        const size = view.getUint32(offset + 4, true);
        if (id === "fmt ")
            format = {audioFormat: view.getUint16(offset + 8, true), channels: view.getUint16(offset + 10, true), sampleRate: view.getUint32(offset + 12, true), bitsPerSample: view.getUint16(offset + 22, true)};
        if (id === "data") {
            if (format == null || format.audioFormat !== 1 || format.bitsPerSample !== 16)
                throw new Error(`unexpected fmt chunk ${JSON.stringify(format)}`);
            const start = offset + 8;
            const end = size === 0xFFFFFFFF ? bytes.length : start + size;
            if (end > bytes.length)
                throw new Error(`data chunk declares ${size} bytes, only ${bytes.length - start} present`);
            return {
                samples: pcm16ToFloat(bytes.subarray(start, end)), sampleRate: format.sampleRate, channels: format.channels,
                declared: {riffSize: view.getUint32(4, true), dataSize: size}
            };
        }
        offset += 8 + size;
    }
    throw new Error("no data chunk");
}

export function pcm16ToFloat(bytes: Uint8Array): Float32Array {
    if (bytes.length % 2 !== 0)
        throw new Error(`odd PCM byte count ${bytes.length}`);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    return Float32Array.from({length: bytes.length / 2}, (_, i) => {
        const value = view.getInt16(2 * i, true);
        // The encoders scale -1 to -0x8000 and +1 to +0x7FFF.
        return value < 0 ? value / 0x8000 : value / 0x7FFF;
    });
}

async function decodeFlac(bytes: Uint8Array): Promise<DecodedSpeech> {
    const decoder = new FLACDecoder();
    await decoder.ready;
    try {
        const decoded = await decoder.decodeFile(bytes);
        if (decoded.errors.length > 0)
            throw new Error(`FLAC decode errors: ${JSON.stringify(decoded.errors)}`);
        const view = new DataView(bytes.buffer, bytes.byteOffset + 8, 34);
        const totalSamples = (view.getUint8(13) & 0x0F) * 2 ** 32 + view.getUint32(14);
        return {samples: decoded.channelData[0], sampleRate: decoded.sampleRate, channels: decoded.channelData.length, declared: {totalSamples}};
    } finally {
        decoder.free();
    }
}
