import { oggCrc32 } from "./oggCrc32.js";

/** Header-type flags of an Ogg page. */
export const oggFlags = {beginOfStream: 0x02, endOfStream: 0x04} as const;

/**
 * Writes the pages of one logical Ogg bitstream (RFC 3533): each call packs whole packets into one page
 * with its lacing table, sequence number and CRC. Packets never span pages here; a page holds at most 255 lacing values.
 */
export class OggPageWriter {
    private sequence = 0;

    constructor(private readonly serial: number) {}

    /** granule: the codec's position after the last packet that ends on this page. */
    page(packets: readonly Uint8Array[], granule: bigint, flags = 0): Uint8Array {
        const lacing: number[] = [];
        let bodyLength = 0;
        for (const packet of packets) {
            // A packet is 255-byte segments closed by one shorter segment (possibly 0) that marks its end.
            for (let left = packet.length; ; left -= 255) {
                lacing.push(Math.min(left, 255));
                if (left < 255) break;
            }
            bodyLength += packet.length;
        }
        if (lacing.length > 255) throw new RangeError(`an Ogg page holds at most 255 segments, these packets need ${lacing.length}`);
        const page = new Uint8Array(27 + lacing.length + bodyLength);
        const view = new DataView(page.buffer);
        page.set([0x4F, 0x67, 0x67, 0x53]); // "OggS"
        page[4] = 0; // stream structure version
        page[5] = flags;
        view.setBigInt64(6, granule, true);
        view.setUint32(14, this.serial, true);
        view.setUint32(18, this.sequence++, true);
        page[26] = lacing.length;
        page.set(lacing, 27);
        let offset = 27 + lacing.length;
        for (const packet of packets) {
            page.set(packet, offset);
            offset += packet.length;
        }
        view.setUint32(22, oggCrc32(page), true); // computed with the CRC field still zero
        return page;
    }
}
