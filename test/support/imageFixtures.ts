import { deflateSync } from "node:zlib";
import sharp from "sharp";

/** A 1x1 red PNG, as base64. */
export const tinyPngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** A `width` x `height` image, left half red and right half blue, encoded as `format`. */
export async function twoColourImage(format: "png" | "jpeg" | "webp" | "gif", width: number, height: number): Promise<Buffer> {
    const rgb = Buffer.alloc(width * height * 3);
    for (let y = 0; y < height; y++)
        for (let x = 0; x < width; x++)
            rgb.set(x < width / 2 ? [255, 0, 0] : [0, 0, 255], (y * width + x) * 3);
    const image = sharp(rgb, {raw: {width, height, channels: 3}});
    return format === "png" ? image.png().toBuffer() : format === "jpeg" ? image.jpeg({quality: 95}).toBuffer()
        : format === "webp" ? image.webp({lossless: true}).toBuffer() : image.gif().toBuffer();
}

export function dataUrl(type: string, bytes: Uint8Array) {
    return `data:${type};base64,${Buffer.from(bytes).toString("base64")}`;
}

function crc32(bytes: Uint8Array) {
    let crc = ~0;
    for (const byte of bytes) {
        crc ^= byte;
        for (let bit = 0; bit < 8; bit++)
            crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
    }
    return ~crc >>> 0;
}

function chunk(type: string, data: Uint8Array) {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
}

/** A PNG whose header says `width` x `height` and which holds one byte of pixel data: a decompression bomb's header, a few dozen bytes. */
export function pngHeaderOnly(width: number, height: number): Buffer {
    const header = Buffer.alloc(13);
    header.writeUInt32BE(width, 0);
    header.writeUInt32BE(height, 4);
    header.set([8, 2, 0, 0, 0], 8);
    return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", deflateSync(Buffer.alloc(1))), chunk("IEND", new Uint8Array())]);
}
