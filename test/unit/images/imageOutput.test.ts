import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { composeGrid } from "../../../src/capabilities/images/output/composeGrid.js";
import { encodeImage } from "../../../src/capabilities/images/output/encodeImage.js";
import { ImageLinkStore } from "../../../src/capabilities/images/output/ImageLinkStore.js";

const solid = (width: number, height: number, [r, g, b]: number[]) => {
    const rgb = new Uint8Array(width * height * 3);
    for (let index = 0; index < rgb.length; index += 3)
        rgb.set([r, g, b], index);
    return {rgb, width, height};
};
const gradient = (width: number, height: number) => {
    const rgb = new Uint8Array(width * height * 3);
    for (let index = 0; index < rgb.length; index++)
        rgb[index] = (index * 31 + (index >> 7)) & 255;
    return {rgb, width, height};
};

describe("composeGrid", () => {
    it("puts the four images in a 2x2 grid (1 2 / 3 4) twice as wide and high", () => {
        const colours = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0]];
        const grid = composeGrid(colours.map((colour) => solid(3, 2, colour)));
        expect([grid.width, grid.height]).toEqual([6, 4]);
        const pixel = (x: number, y: number) => [...grid.rgb.subarray((y * 6 + x) * 3, (y * 6 + x) * 3 + 3)];
        expect([pixel(0, 0), pixel(2, 1), pixel(3, 0), pixel(5, 1), pixel(0, 2), pixel(2, 3), pixel(3, 2), pixel(5, 3)])
            .toEqual([colours[0], colours[0], colours[1], colours[1], colours[2], colours[2], colours[3], colours[3]]);
    });

    it("refuses other counts and mixed sizes", () => {
        expect(() => composeGrid([solid(2, 2, [0, 0, 0])])).toThrow(RangeError);
        expect(() => composeGrid([solid(2, 2, [0, 0, 0]), solid(2, 2, [0, 0, 0]), solid(2, 2, [0, 0, 0]), solid(2, 4, [0, 0, 0])])).toThrow(RangeError);
    });
});

describe("encodeImage (sharp)", () => {
    it.each(["png", "jpeg", "webp"] as const)("%s decodes to the right size, and the same pixels give the same bytes", async (format) => {
        const image = gradient(40, 24);
        const bytes = await encodeImage(image, {format, compression: 80});
        const metadata = await sharp(bytes).metadata();
        expect([metadata.format, metadata.width, metadata.height]).toEqual([format, 40, 24]);
        expect((await encodeImage(image, {format, compression: 80})).equals(bytes)).toBe(true);
    });

    it("PNG is lossless; lower output_compression makes smaller JPEG and WebP files", async () => {
        const image = gradient(64, 64);
        const {data} = await sharp(await encodeImage(image, {format: "png", compression: 0})).raw().toBuffer({resolveWithObject: true});
        expect(new Uint8Array(data)).toEqual(image.rgb);
        for (const format of ["jpeg", "webp"] as const)
            expect((await encodeImage(image, {format, compression: 10})).length).toBeLessThan((await encodeImage(image, {format, compression: 100})).length);
    });

    it("scales a preview to the final size", async () => {
        const bytes = await encodeImage(solid(8, 8, [10, 20, 30]), {format: "png", compression: 100, resizeTo: {width: 64, height: 32}});
        const {data, info} = await sharp(bytes).raw().toBuffer({resolveWithObject: true});
        expect([info.width, info.height]).toEqual([64, 32]);
        expect([...data.subarray(0, 3)]).toEqual([10, 20, 30]);
    });
});

describe("ImageLinkStore", () => {
    const store = (clock: {now: number}, maxBytes = 1000) => new ImageLinkStore({now: () => clock.now, ttlMs: 60_000, maxBytes});

    it("keeps an image under an unguessable name until its time is up, then deletes it", () => {
        const clock = {now: 1_000_000};
        const links = store(clock);
        const name = links.put(Buffer.from("abc"), "png", "image/png");
        expect(name).toMatch(/^[0-9a-f]{32}\.png$/);
        expect(links.put(Buffer.from("abc"), "png", "image/png")).not.toBe(name);
        clock.now += 59_999;
        expect(links.get(name)?.bytes.toString()).toBe("abc");
        clock.now += 1;
        expect(links.get(name)).toBeUndefined();
        expect(links.size).toBe(0);
    });

    it("drops the oldest images early past its memory bound, never the one just stored", () => {
        const clock = {now: 0};
        const links = store(clock, 10);
        const first = links.put(Buffer.alloc(6), "png", "image/png");
        const second = links.put(Buffer.alloc(6), "png", "image/png");
        expect(links.get(first)).toBeUndefined();
        expect(links.get(second)).toBeDefined();
        expect(links.get(links.put(Buffer.alloc(20), "png", "image/png"))).toBeDefined();
    });
});
