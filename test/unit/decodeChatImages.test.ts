import { afterAll, describe, expect, it } from "vitest";
import type { ChatImage } from "../../src/capabilities/chat/ChatEngine.js";
import { ImageInputError } from "../../src/capabilities/chat/errors/ImageInputError.js";
import { decodeChatImages } from "../../src/capabilities/chat/vision/decodeChatImages.js";
import { imageLimits } from "../../src/capabilities/chat/vision/imageLimits.js";
import { WorkerPool } from "../../src/core/workers/WorkerPool.js";
import { pngHeaderOnly, tinyPngBase64, twoColourImage } from "../support/imageFixtures.js";

const pool = new WorkerPool({workers: 1});
afterAll(() => pool.close());

const chatImage = (bytes: Uint8Array, type: ChatImage["type"], detail: ChatImage["detail"] = "auto"): ChatImage =>
    ({type, base64: Buffer.from(bytes).toString("base64"), detail, source: "messages[0].content[1]"});

/** The RGB of pixel (x, y). */
const pixel = (image: {rgb: Uint8Array, width: number}, x: number, y: number) => [...image.rgb.subarray((y * image.width + x) * 3, (y * image.width + x) * 3 + 3)];

describe("decodeChatImages (in the worker pool)", () => {
    it.each(["png", "jpeg", "webp", "gif"] as const)("decodes a %s to RGB rows", async (format) => {
        const [image] = await decodeChatImages(pool, [chatImage(await twoColourImage(format, 64, 32), `image/${format}`)], new AbortController().signal);
        expect({width: image.width, height: image.height, bytes: image.rgb.length}).toEqual({width: 64, height: 32, bytes: 64 * 32 * 3});
        const [red, blue] = [pixel(image, 4, 16), pixel(image, 60, 16)];
        expect(red[0]).toBeGreaterThan(200);
        expect(red[2]).toBeLessThan(60);
        expect(blue[2]).toBeGreaterThan(200);
        expect(blue[0]).toBeLessThan(60);
    });

    it("scales a large image down to the longest edge (aspect kept), and further for detail 'low'", async () => {
        const bytes = await twoColourImage("png", 3000, 1500);
        const [high, low] = await decodeChatImages(pool, [chatImage(bytes, "image/png"), chatImage(bytes, "image/png", "low")], new AbortController().signal);
        expect([high.width, high.height, high.originalWidth, high.originalHeight]).toEqual([imageLimits.maxEdge, imageLimits.maxEdge / 2, 3000, 1500]);
        expect([low.width, low.height]).toEqual([imageLimits.lowDetailEdge, imageLimits.lowDetailEdge / 2]);
    });

    it("refuses an image whose header says more pixels than the limit, naming its part, without decoding it", async () => {
        const bomb = pngHeaderOnly(20_000, 20_000);
        const failure = await decodeChatImages(pool, [chatImage(bomb, "image/png")], new AbortController().signal).catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(ImageInputError);
        expect(failure).toMatchObject({source: "messages[0].content[1]", reason: "pixels"});
        expect((failure as Error).message).toContain("20000x20000");
    });

    it.each([
        ["bad base64", {type: "image/png", base64: "iVBOR!!w0KGgo=", detail: "auto"}, "base64", "not valid base64"],
        ["base64 with a padding inside", {type: "image/png", base64: "iV=BORw0KGgo", detail: "auto"}, "base64", "not valid base64"],
        ["bytes that are no image", {type: "image/png", base64: Buffer.from("hello world!").toString("base64"), detail: "auto"}, "format", "not a PNG, JPEG, WebP or GIF"],
        ["a PNG said to be a JPEG", {type: "image/jpeg", base64: tinyPngBase64, detail: "auto"}, "format", "'image/png' image, not 'image/jpeg'"]
    ] as const)("refuses %s, naming the part", async (_name, image, reason, words) => {
        const failure = await decodeChatImages(pool, [{...image, source: "messages[0].content[1]"}], new AbortController().signal).catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(ImageInputError);
        expect(failure).toMatchObject({reason, source: "messages[0].content[1]"});
        expect((failure as Error).message).toContain(words);
    });

    it("refuses a truncated image as undecodable", async () => {
        const bytes = await twoColourImage("png", 64, 64);
        const failure = await decodeChatImages(pool, [chatImage(bytes.subarray(0, 60), "image/png")], new AbortController().signal).catch((error: unknown) => error);
        expect(failure).toMatchObject({reason: "undecodable", source: "messages[0].content[1]"});
    });
});
