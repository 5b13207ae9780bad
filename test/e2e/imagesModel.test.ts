import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { samplerNames } from "../../src/capabilities/images/samplers/samplerNames.js";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinySdFp16Path, tinySdPath } from "../support/testModels.js";

const models = [
    {id: "tiny-sd", task: "image", path: tinySdPath, aliases: ["dall-e-3"]},
    {id: "tiny-sd-fp16", task: "image", path: tinySdFp16Path},
    {id: "tiny-mj", task: "image", path: tinySdPath, parameterSet: "midjourney", defaults: {steps: 3, sampler: "Euler a", guidanceScale: 2}}
];

const decode = async (base64: string) => {
    const bytes = Buffer.from(base64, "base64");
    const {info} = await sharp(bytes).raw().toBuffer({resolveWithObject: true});
    return {width: info.width, height: info.height, format: (await sharp(bytes).metadata()).format};
};

/** The tiny random-weight SD model (64x64 native) through the whole server: worker pool, samplers, VAE, sharp. */
describe("/v1/images/generations on the generated tiny Stable Diffusion model", () => {
    let server: TestServer;
    const generate = async (body: Record<string, unknown>, on = server) => {
        const response = await on.post("/v1/images/generations", {model: "tiny-sd", prompt: "a photo of a cat", steps: 4, seed: 11, ...body});
        const json = await jsonOf(response);
        expect(response.status, JSON.stringify(json)).toBe(200);
        return json;
    };

    beforeAll(async () => {
        server = await startTestServer({models});
    });
    afterAll(() => server.stop());

    it("every sampler runs through the server and gives its own image of the native size", async () => {
        const images = new Set<string>();
        for (const sampler of samplerNames) {
            const body = await generate({sampler});
            expect(body.size).toBe("64x64");
            expect(body.data[0].seed).toBe(11);
            expect(await decode(body.data[0].b64_json)).toEqual({width: 64, height: 64, format: "png"});
            images.add(body.data[0].b64_json);
        }
        expect(images.size).toBe(samplerNames.length);
    });

    it("the negative prompt, the seed and the size change the image; n images differ; usage counts CLIP tokens", async () => {
        const base = await generate({});
        expect((await generate({negative_prompt: "blurry"})).data[0].b64_json).not.toBe(base.data[0].b64_json);
        expect((await generate({seed: 12})).data[0].b64_json).not.toBe(base.data[0].b64_json);
        const wide = await generate({size: "128x64", output_format: "webp"});
        expect(await decode(wide.data[0].b64_json)).toEqual({width: 128, height: 64, format: "webp"});
        const three = await generate({n: 3});
        expect(three.data.map((item: {seed: number}) => item.seed)).toEqual([11, 12, 13]);
        expect(new Set(three.data.map((item: {b64_json: string}) => item.b64_json)).size).toBe(3);
        expect(three.data[0].b64_json).toBe(base.data[0].b64_json);
        // "a photo of a cat": start + 5 words + end token; the negative prompt adds its own.
        expect(base.usage).toMatchObject({input_tokens: 7, output_tokens: 64, total_tokens: 71, input_tokens_details: {text_tokens: 7, image_tokens: 0}});
        expect((await generate({negative_prompt: "blurry"})).usage.input_tokens).toBe(10);
    });

    it("OpenAI's 1024x1024 beyond the model's bounds is a 400 naming size", async () => {
        const response = await server.post("/v1/images/generations", {model: "tiny-sd", prompt: "a cat", size: "1024x1024"});
        expect(response.status).toBe(400);
        expect((await jsonOf(response)).error).toMatchObject({param: "size"});
    });

    it("the fp16 export works through the server too", async () => {
        const body = await generate({model: "tiny-sd-fp16", output_format: "jpeg"});
        expect(await decode(body.data[0].b64_json)).toEqual({width: 64, height: 64, format: "jpeg"});
    });

    it("streams progress per step, previews from the worker scaled to the size, then the final image", async () => {
        const {events} = await readSse(await server.post("/v1/images/generations",
            {model: "tiny-sd", prompt: "a photo of a cat", steps: 8, seed: 11, stream: true, partial_images: 3}));
        const data = events.map((event) => JSON.parse(event.data));
        expect(data.filter((item) => item.type === "image_generation.progress").map((item) => item.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
        const partials = data.filter((item) => item.type === "image_generation.partial_image");
        expect(partials.map((item) => item.partial_image_index)).toEqual([0, 1, 2]);
        for (const item of partials)
            expect(await decode(item.b64_json)).toEqual({width: 64, height: 64, format: "png"});
        expect(data.at(-1).type).toBe("image_generation.completed");
        expect(data.at(-1).b64_json).toBe((await generate({steps: 8})).data[0].b64_json);
    });

    it("the official client, and a MidJourney-style grid of four variations", async () => {
        const response = await server.client.images.generate({model: "dall-e-3", prompt: "a red house", size: "64x64" as "1024x1024"});
        expect(await decode(response.data![0].b64_json!)).toMatchObject({width: 64, height: 64});
        const grid = await jsonOf(await server.post("/v1/images/generations", {model: "tiny-mj", prompt: "a red house"}));
        expect(grid.size).toBe("128x128");
        expect(grid.data[0].seeds).toHaveLength(4);
        expect(await decode(grid.data[0].b64_json)).toEqual({width: 128, height: 128, format: "png"});
        // Streamed: the model's 3 steps allow 2 partial grids, each composed of the four images' previews from the worker.
        const {events} = await readSse(await server.post("/v1/images/generations", {model: "tiny-mj", prompt: "a red house", stream: true}));
        const data = events.map((event) => JSON.parse(event.data));
        expect(data.map((item) => item.type)).toEqual([
            "image_generation.progress", "image_generation.partial_image", "image_generation.progress", "image_generation.partial_image",
            "image_generation.progress", "image_generation.completed"
        ]);
        for (const item of data.filter((event) => event.b64_json != null))
            expect(await decode(item.b64_json)).toEqual({width: 128, height: 128, format: "png"});
    });

    it("the same seed gives the same bytes after a restart", async () => {
        const before = (await generate({sampler: "DPM++ SDE Karras", negative_prompt: "ugly"})).data[0].b64_json;
        const again = await startTestServer({models});
        try {
            expect((await generate({sampler: "DPM++ SDE Karras", negative_prompt: "ugly"}, again)).data[0].b64_json).toBe(before);
        } finally {
            await again.stop();
        }
    });
});

describe("an image model whose manifest default size is outside its bounds", () => {
    it("fails to load, naming the model and the field", async () => {
        const server = await startTestServer({
            models: [{id: "tiny-sd-bad", task: "image", path: tinySdPath, defaults: {size: "32x32"}}],
            waitUntilReady: false
        });
        try {
            await expect(server.ready).rejects.toThrow(/tiny-sd-bad.*'defaults\.size' is 32x32, outside this model's sizes \(each side 64\.\.128/);
        } finally {
            await server.stop();
        }
    });
});
