import { describe, expect, it } from "vitest";
import { createAudioEncoder } from "../../../../src/media/audio/createAudioEncoder.js";
import { encodeChunks } from "./encodeChunks.js";
import { randomChunks, sentenceLikeSignal } from "./signals.js";

/** Reference CRC (bitwise, no table) of an Ogg page with its CRC field zeroed: an independent check of the muxer's table-driven one. */
function pageCrc(page: Uint8Array): number {
    const copy = page.slice();
    copy.fill(0, 22, 26);
    let crc = 0;
    for (const byte of copy) {
        crc ^= byte << 24;
        for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04C11DB7 : crc << 1;
    }
    return crc >>> 0;
}

/** Duration of an Opus packet from its TOC byte (RFC 6716 §3.1): frame size by configuration times frame count code. */
function packetMilliseconds(toc: number): number {
    const config = toc >> 3;
    const frame = config < 12 ? [10, 20, 40, 60][config % 4] : config < 16 ? [10, 20][config % 2] : [2.5, 5, 10, 20][config % 4];
    const code = toc & 0x03;
    expect(code).not.toBe(3); // arbitrary frame counts: never produced for one 20 ms input frame
    return frame * (code === 0 ? 1 : 2);
}

type Page = {flags: number; granule: bigint; serial: number; sequence: number; crc: number; computedCrc: number; packets: Uint8Array[]};

function parsePages(bytes: Uint8Array): Page[] {
    const pages: Page[] = [];
    for (let at = 0; at < bytes.length;) {
        const view = new DataView(bytes.buffer, bytes.byteOffset + at);
        expect(String.fromCharCode(...bytes.subarray(at, at + 4))).toBe("OggS");
        const segments = bytes[at + 26];
        const lacing = bytes.subarray(at + 27, at + 27 + segments);
        const packets: Uint8Array[] = [];
        let offset = at + 27 + segments;
        let start = offset;
        for (const size of lacing) {
            offset += size;
            if (size < 255) {
                packets.push(bytes.subarray(start, offset));
                start = offset;
            }
        }
        const page = bytes.subarray(at, offset);
        pages.push({flags: bytes[at + 5], granule: view.getBigInt64(6, true), serial: view.getUint32(14, true), sequence: view.getUint32(18, true), crc: view.getUint32(22, true), computedCrc: pageCrc(page), packets});
        at = offset;
    }
    return pages;
}

describe("Ogg Opus stream structure", () => {
    it.each([24_000, 16_000])("from %i Hz: headers, CRCs, sequence, 20 ms packets, granules, EOS with trimmed final granule", async inputSampleRate => {
        const input = sentenceLikeSignal(inputSampleRate);
        const {bytes} = await encodeChunks(await createAudioEncoder("opus", {inputSampleRate, streaming: true}), randomChunks(input, 5));
        const pages = parsePages(bytes);
        for (const [index, page] of pages.entries()) {
            expect(page.crc, `page ${index}`).toBe(page.computedCrc);
            expect(page.sequence).toBe(index);
            expect(page.serial).toBe(pages[0].serial);
        }
        const [head, tags, ...audio] = pages;
        expect(head.flags).toBe(0x02);
        expect(String.fromCharCode(...head.packets[0].subarray(0, 8))).toBe("OpusHead");
        const headView = new DataView(head.packets[0].buffer, head.packets[0].byteOffset);
        expect(head.packets[0][9]).toBe(1); // mono
        const preSkip = headView.getUint16(10, true);
        expect(preSkip).toBeGreaterThan(0);
        expect(headView.getUint32(12, true)).toBe(inputSampleRate);
        expect(String.fromCharCode(...tags.packets[0].subarray(0, 8))).toBe("OpusTags");
        expect(tags.granule).toBe(0n);

        let packets = 0;
        for (const page of audio.slice(0, -1)) {
            packets += page.packets.length;
            for (const packet of page.packets) expect(packetMilliseconds(packet[0])).toBe(20);
            expect(page.granule).toBe(BigInt(packets * 960));
            expect(page.flags).toBe(0);
        }
        const last = audio[audio.length - 1];
        packets += last.packets.length;
        expect(last.flags).toBe(0x04);
        const inputAt48k = (input.length * 48_000) / inputSampleRate;
        expect(last.granule).toBe(BigInt(preSkip + inputAt48k));
        expect(last.granule).toBeLessThanOrEqual(BigInt(packets * 960));
        expect(BigInt(packets * 960) - last.granule).toBeLessThan(960n + BigInt(preSkip));
    });
});
