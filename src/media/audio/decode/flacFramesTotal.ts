/** How far from the end the last frames are looked for: a FLAC frame is at most a few hundred KB, tags after them little. */
const tailBytes = 1024 * 1024;

type FrameHeader = {offset: number, firstSample: number, blockSize: number};

/**
 * The number of samples a FLAC file's frames declare, read from its last two frame headers (each frame header
 * carries its frame number, or with variable block sizes its first sample's number): the last frame's first sample
 * plus its block size. For a file whose STREAMINFO leaves the total 0 ("unknown", as a stream's encoder writes it),
 * so that its length is known without decoding it. A header is taken only with its CRC-8 right, and only when the
 * frame before it agrees (its number one less, or its samples ending where the last starts): a sync code that
 * happens to appear in the audio data is not taken for a header. Null when no such pair is found near the end.
 *
 * `nominalBlockSize`: STREAMINFO's block size (a fixed-block-size stream numbers its frames, each of that size).
 */
export function flacFramesTotal(bytes: Uint8Array, nominalBlockSize: number, framesStart: number): number | null {
    const from = Math.max(framesStart, bytes.length - tailBytes);
    let last: FrameHeader | null = null;
    for (let offset = bytes.length - 2; offset >= from; offset--) {
        if (bytes[offset] !== 0xFF || (bytes[offset + 1] & 0xFE) !== 0xF8)
            continue;
        const header = frameHeader(bytes, offset, nominalBlockSize);
        if (header == null)
            continue;
        if (last == null) {
            last = header;
            continue;
        }
        if (header.firstSample + header.blockSize === last.firstSample)
            return last.firstSample + last.blockSize;
        // Not the frame before the one taken as last: perhaps that one was audio data mistaken for a header.
        last = header;
    }
    return null;
}

/** A frame header at `offset` (its fields valid and its CRC-8 right), or null. */
function frameHeader(bytes: Uint8Array, offset: number, nominalBlockSize: number): FrameHeader | null {
    const variable = (bytes[offset + 1] & 0x01) === 1;
    if (offset + 4 >= bytes.length)
        return null;
    const blockCode = bytes[offset + 2] >> 4;
    const rateCode = bytes[offset + 2] & 0x0F;
    const channels = bytes[offset + 3] >> 4;
    const sampleSize = (bytes[offset + 3] >> 1) & 0x07;
    if (blockCode === 0 || rateCode === 15 || channels > 10 || sampleSize === 3 || (bytes[offset + 3] & 0x01) !== 0)
        return null;
    let at = offset + 4;
    // The frame (or sample) number, UTF-8-like: a first byte saying how many continuation bytes follow.
    const first = bytes[at++];
    let continuation = first < 0x80 ? 0 : first >= 0xC0 && first < 0xE0 ? 1 : first >= 0xE0 && first < 0xF0 ? 2 : first >= 0xF0 && first < 0xF8 ? 3 :
        first >= 0xF8 && first < 0xFC ? 4 : first >= 0xFC && first < 0xFE ? 5 : first === 0xFE ? 6 : -1;
    if (continuation === -1 || (!variable && continuation > 5))
        return null;
    let number = continuation === 0 ? first : first & (0x3F >> continuation);
    for (; continuation > 0; continuation--) {
        const next = bytes[at++];
        if (next === undefined || (next & 0xC0) !== 0x80)
            return null;
        number = number * 64 + (next & 0x3F);
    }
    let blockSize: number;
    if (blockCode === 1)
        blockSize = 192;
    else if (blockCode <= 5)
        blockSize = 576 * 2 ** (blockCode - 2);
    else if (blockCode === 6)
        blockSize = bytes[at++] + 1;
    else if (blockCode === 7) {
        blockSize = (bytes[at] << 8 | bytes[at + 1]) + 1;
        at += 2;
    } else
        blockSize = 256 * 2 ** (blockCode - 8);
    at += rateCode === 12 ? 1 : rateCode === 13 || rateCode === 14 ? 2 : 0;
    if (at >= bytes.length || crc8(bytes, offset, at) !== bytes[at])
        return null;
    return {offset, firstSample: variable ? number : number * nominalBlockSize, blockSize};
}

/** FLAC's frame header CRC-8 (polynomial x^8 + x^2 + x + 1, initial 0) of bytes[start, end). */
function crc8(bytes: Uint8Array, start: number, end: number): number {
    let crc = 0;
    for (let index = start; index < end; index++) {
        crc ^= bytes[index];
        for (let bit = 0; bit < 8; bit++)
            crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xFF : (crc << 1) & 0xFF;
    }
    return crc;
}
