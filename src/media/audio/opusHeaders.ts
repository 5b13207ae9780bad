/** The two header packets of an Ogg Opus stream (RFC 7845 §5): identification (OpusHead) and comments (OpusTags). */
export function opusHeaders(preSkip: number, inputSampleRate: number, vendor: string): {head: Uint8Array; tags: Uint8Array} {
    const head = new Uint8Array(19);
    const headView = new DataView(head.buffer);
    head.set(new TextEncoder().encode("OpusHead"));
    head[8] = 1; // version
    head[9] = 1; // channels
    headView.setUint16(10, preSkip, true); // samples at 48 kHz to drop from the decoder's output
    headView.setUint32(12, inputSampleRate, true); // informational: the rate the audio was encoded from
    headView.setInt16(16, 0, true); // output gain
    head[18] = 0; // channel mapping family 0: mono or stereo, no table

    const vendorBytes = new TextEncoder().encode(vendor);
    const tags = new Uint8Array(8 + 4 + vendorBytes.length + 4);
    const tagsView = new DataView(tags.buffer);
    tags.set(new TextEncoder().encode("OpusTags"));
    tagsView.setUint32(8, vendorBytes.length, true);
    tags.set(vendorBytes, 12);
    tagsView.setUint32(12 + vendorBytes.length, 0, true); // no user comments
    return {head, tags};
}
