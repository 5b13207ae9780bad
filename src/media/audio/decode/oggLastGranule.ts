/**
 * The granule position of an Ogg file's last page that has one: for Opus and Vorbis, the number of samples
 * decoded from the start of the stream to the end of that page, so the file's length as its pages declare it
 * (a chained file's last link only: a lower bound). Read from the end, past any trailing bytes; null when no
 * page ends a packet.
 */
export function oggLastGranule(bytes: Uint8Array): number | null {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    for (let offset = bytes.length - 27; offset >= 0; offset--) {
        // "OggS", stream structure version 0.
        if (bytes[offset] !== 0x4F || bytes[offset + 1] !== 0x67 || bytes[offset + 2] !== 0x67 || bytes[offset + 3] !== 0x53 || bytes[offset + 4] !== 0)
            continue;
        const low = view.getUint32(offset + 6, true);
        const high = view.getUint32(offset + 10, true);
        // -1: no packet ends on this page.
        if (low === 0xFFFFFFFF && high === 0xFFFFFFFF)
            continue;
        return high * 2 ** 32 + low;
    }
    return null;
}
