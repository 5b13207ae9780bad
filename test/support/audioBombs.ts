import { encodeFixture } from "./audioFixtures.js";

/**
 * Uploads that are small but declare or decode to hours of audio (issue 29, finding 3), generated here
 * rather than committed: the security tests and `npm run bench:security` send them.
 */

/** The largest upload the transcription routes take (OpenAI's 25 MB), less room for the multipart framing. */
export const uploadLimitBytes = 25 * 1024 * 1024 - 4096;

/**
 * A RIFF/WAVE header with `rate`, 8-bit mono, and `dataBytes` bytes of silence: at 1 Hz, 1,000 bytes
 * claim 1,000 s (the 1,044-byte file of the finding).
 */
export function wavAtRate(rate: number, dataBytes = 1000): Uint8Array {
    const bytes = new Uint8Array(44 + dataBytes).fill(128);
    const view = new DataView(bytes.buffer);
    const text = (offset: number, value: string) => bytes.set(new TextEncoder().encode(value), offset);
    text(0, "RIFF");
    view.setUint32(4, bytes.length - 8, true);
    text(8, "WAVEfmt ");
    view.setUint32(16, 16, true);
    view.setUint16(20, 1, true);
    view.setUint16(22, 1, true);
    view.setUint32(24, rate, true);
    view.setUint32(28, rate, true);
    view.setUint16(32, 1, true);
    view.setUint16(34, 8, true);
    text(36, "data");
    view.setUint32(40, dataBytes, true);
    return bytes;
}

const encodedSilence = new Map<string, Promise<Uint8Array>>();

/** What a scaled FLAC's STREAMINFO says: the true sample count (as an encoder writes it), 0 ("unknown", as a stream's), or the one of the file it was scaled from. */
export type StreamInfoTotal = "true" | "unknown" | "original";

/**
 * Silence encoded by the server's own FLAC encoder (libFLAC, 16 kHz mono, 4096-sample blocks): 600 s is about
 * 28 KB, each frame a dozen bytes. `scaleTo` repeats its frames until the file is about that many bytes
 * (600 s per 28 KB: the 25 MB upload limit holds about 147 hours), with STREAMINFO's total as `total` says.
 */
export async function flacSilence(seconds: number, options: {rate?: number, scaleTo?: number, total?: StreamInfoTotal} = {}): Promise<Uint8Array> {
    const rate = options.rate ?? 16_000;
    const key = `${seconds}@${rate}`;
    // Whole blocks only, so that the frames can be repeated as they are; encoded once per length (libFLAC takes seconds for 600 s).
    let encoding = encodedSilence.get(key);
    if (encoding == null)
        encodedSilence.set(key, encoding = encodeFixture("flac", new Float32Array(Math.ceil(seconds * rate / 4096) * 4096), rate));
    const encoded = await encoding;
    const framesStart = flacFramesOffset(encoded);
    const frames = encoded.subarray(framesStart);
    const copies = options.scaleTo == null ? 1 : Math.max(1, Math.floor((options.scaleTo - framesStart) / frames.length));
    const out = new Uint8Array(framesStart + copies * frames.length);
    out.set(encoded.subarray(0, framesStart));
    for (let copy = 0; copy < copies; copy++)
        out.set(frames, framesStart + copy * frames.length);
    const samples = copies * (frames.length === 0 ? 0 : Math.ceil(seconds * rate / 4096) * 4096);
    if (options.total === "unknown")
        setStreamInfoTotal(out, 0);
    else if (options.total !== "original")
        setStreamInfoTotal(out, samples);
    return out;
}

/** Where a FLAC file's frames start: after "fLaC" and its metadata blocks (the last one flagged). */
function flacFramesOffset(bytes: Uint8Array): number {
    let offset = 4;
    for (;;) {
        const last = (bytes[offset] & 0x80) !== 0;
        offset += 4 + (bytes[offset + 1] << 16 | bytes[offset + 2] << 8 | bytes[offset + 3]);
        if (last)
            return offset;
    }
}

/** STREAMINFO's 36-bit total sample count (the first metadata block's bytes 13-17). */
function setStreamInfoTotal(bytes: Uint8Array, total: number) {
    const view = new DataView(bytes.buffer, bytes.byteOffset + 8, 34);
    view.setUint8(13, (view.getUint8(13) & 0xF0) | Math.floor(total / 2 ** 32));
    view.setUint32(14, total >>> 0);
}
