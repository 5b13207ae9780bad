import { ascii } from "./ascii.js";

const sampleRates: Record<number, readonly number[]> = {3: [44_100, 48_000, 32_000], 2: [22_050, 24_000, 16_000], 0: [11_025, 12_000, 8_000]};

/**
 * The length an MP3's Xing/Info (or Fraunhofer VBRI) header declares: the frame count that encoders write
 * into their first frame, times the samples per frame. Null without one (a plain CBR stream): MP3 has no other
 * header that tells the length, and an estimate from the first frame's bitrate could be far off.
 */
export function mp3DeclaredSeconds(bytes: Uint8Array): number | null {
    let offset = 0;
    // An ID3v2 tag first: 10 bytes, its size as four 7-bit bytes, and a 10-byte footer when flagged.
    if (ascii(bytes, 0, 3) === "ID3" && bytes.length >= 10)
        offset = 10 + (bytes[6] << 21 | bytes[7] << 14 | bytes[8] << 7 | bytes[9]) + (bytes[5] & 0x10 ? 10 : 0);
    if (offset + 4 > bytes.length || bytes[offset] !== 0xFF || (bytes[offset + 1] & 0xE0) !== 0xE0)
        return null;
    const version = bytes[offset + 1] >> 3 & 3;
    const layer = bytes[offset + 1] >> 1 & 3;
    const sampleRate = sampleRates[version]?.[bytes[offset + 2] >> 2 & 3];
    // Xing and VBRI headers are written in a Layer III frame.
    if (sampleRate == null || layer !== 1)
        return null;
    const mono = (bytes[offset + 3] >> 6) === 3;
    const samplesPerFrame = version === 3 ? 1152 : 576;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const xing = offset + 4 + (version === 3 ? (mono ? 17 : 32) : (mono ? 9 : 17));
    if (xing + 12 <= bytes.length && ["Xing", "Info"].includes(ascii(bytes, xing, 4)) && (view.getUint32(xing + 4) & 1) !== 0)
        return view.getUint32(xing + 8) * samplesPerFrame / sampleRate;
    const vbri = offset + 4 + 32;
    if (vbri + 18 <= bytes.length && ascii(bytes, vbri, 4) === "VBRI")
        return view.getUint32(vbri + 14) * samplesPerFrame / sampleRate;
    return null;
}
