import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCapabilities } from "../../src/capabilities/capabilities.js";
import type { Capability } from "../../src/capabilities/Capability.js";
import { createImagesCapability, imageLinkTtlMs } from "../../src/capabilities/images/imagesCapability.js";
import { FakeImageEngine, pixels } from "../support/FakeImageEngine.js";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

const capabilities = await loadCapabilities();

/** Polls until `check` passes, a bounded number of times. */
async function eventually(check: () => Promise<boolean> | boolean, tries = 200, delayMs = 10) {
    for (let attempt = 0; attempt < tries; attempt++) {
        if (await check())
            return true;
        await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
    return false;
}

const decode = async (base64OrBytes: string | Buffer) => {
    const bytes = typeof base64OrBytes === "string" ? Buffer.from(base64OrBytes, "base64") : base64OrBytes;
    const {data, info} = await sharp(bytes).raw().toBuffer({resolveWithObject: true});
    return {rgb: new Uint8Array(data), width: info.width, height: info.height, format: (await sharp(bytes).metadata()).format};
};

describe("/v1/images/generations with a fake engine", () => {
    let server: TestServer;
    const clock = {now: Date.parse("2026-01-01T00:00:00Z")};
    const engines = new Map<string, FakeImageEngine>();
    const apiKey = "sk-images-test";
    const health = async (id: string) => (await jsonOf(await fetch(`${server.url}/health`))).models[id];
    const generate = async (body: Record<string, unknown>) => {
        const response = await server.post("/v1/images/generations", {model: "sd", prompt: "a red fox", ...body});
        return {status: response.status, body: await jsonOf(response)};
    };

    beforeAll(async () => {
        const withClock: readonly Capability[] = [
            ...capabilities.filter((capability) => capability.task !== "image"),
            createImagesCapability({now: () => clock.now}) as Capability
        ];
        server = await startTestServer({
            apiKey,
            capabilities: withClock,
            config: {queueSize: 1},
            models: [
                {id: "sd", task: "image", path: tinyChatModelPath, aliases: ["dall-e-2", "dall-e-3", "gpt-image-1"], defaults: {steps: 4}},
                {id: "mj", task: "image", path: tinyChatModelPath, parameterSet: "midjourney", defaults: {steps: 4, sampler: "Euler", size: "48x48", guidanceScale: 0}}
            ],
            factories: {image: async (entry) => {
                const engine = new FakeImageEngine(entry.id, {queueSize: 1});
                engines.set(entry.id, engine);
                return engine;
            }}
        });
    });
    afterAll(() => server.stop());

    it("answers OpenAI's response with b64 PNGs of the native size, the seed used, and usage", async () => {
        const {status, body} = await generate({seed: 42});
        expect(status).toBe(200);
        expect(body).toMatchObject({size: "64x64", output_format: "png", quality: "medium", background: "opaque"});
        expect(body.created).toBeTypeOf("number");
        expect(body.data).toHaveLength(1);
        // OpenAI's schema types revised_prompt as a string: with no rewritten prompt it is left out, not null.
        expect(body.data[0]).toMatchObject({seed: 42});
        expect("revised_prompt" in body.data[0]).toBe(false);
        // "a red fox": 3 words + 2 special tokens; 64x64 = 8x8 latent positions.
        expect(body.usage).toEqual({input_tokens: 5, output_tokens: 64, total_tokens: 69, input_tokens_details: {text_tokens: 5, image_tokens: 0}});
        const image = await decode(body.data[0].b64_json);
        expect(image).toMatchObject({format: "png", width: 64, height: 64});
        const job = engines.get("sd")!.jobs.at(-1)!;
        expect(image.rgb).toEqual(pixels(job, 42, "final", 64, 64).rgb);
        expect(job).toMatchObject({steps: 4, sampler: "DPM++ 2M Karras", guidanceScale: 7.5, negativePrompt: "", previews: 0});
    });

    it("reports a random seed when none is given, and that seed reproduces the same bytes", async () => {
        const first = (await generate({})).body.data[0];
        expect(Number.isInteger(first.seed)).toBe(true);
        const again = (await generate({seed: first.seed})).body.data[0];
        expect(again.b64_json).toBe(first.b64_json);
    });

    it("n images: consecutive seeds, different images; seed, sampler and negative prompt each change the bytes", async () => {
        const {body} = await generate({n: 3, seed: 7});
        expect(body.data.map((item: {seed: number}) => item.seed)).toEqual([7, 8, 9]);
        expect(new Set(body.data.map((item: {b64_json: string}) => item.b64_json)).size).toBe(3);
        const base = (await generate({seed: 7})).body.data[0].b64_json;
        expect(body.data[0].b64_json).toBe(base);
        for (const change of [{seed: 8000}, {sampler: "Euler a"}, {negative_prompt: "blurry"}, {steps: 5}, {guidance_scale: 2}])
            expect((await generate({seed: 7, ...change})).body.data[0].b64_json).not.toBe(base);
    });

    it.each([["png", 96, 48], ["jpeg", 48, 96], ["webp", 64, 32]] as const)("output_format %s decodes at the requested size %ix%i", async (format, width, height) => {
        const {body} = await generate({output_format: format, output_compression: 70, size: `${width}x${height}`, seed: 1});
        expect(body).toMatchObject({output_format: format, size: `${width}x${height}`});
        expect(await decode(body.data[0].b64_json)).toMatchObject({format, width, height});
    });

    it("OpenAI's 1024x1024 works within the model's bounds; out of bounds is a 400 naming size, never a 500", async () => {
        expect((await generate({size: "1024x1024", seed: 1})).body.size).toBe("1024x1024");
        const {status, body} = await generate({size: "1536x1024"});
        expect(status).toBe(400);
        expect(body.error).toMatchObject({param: "size", type: "invalid_request_error"});
        expect(body.error.message).toContain("from 32 to 1024");
    });

    it("bad inputs are 400s naming the field", async () => {
        for (const [change, param] of [[{n: 5}, "n"], [{steps: 51}, "steps"], [{steps: 0}, "steps"], [{n: 2, stream: true}, "n"],
            [{sampler: "LMS"}, "sampler"], [{background: "transparent"}, "background"], [{prompt: ""}, "prompt"]] as const) {
            const {status, body} = await generate(change);
            expect(status).toBe(400);
            expect(body.error.param).toBe(param);
        }
        // OpenAI's other fields are accepted, unknown ones ignored.
        expect((await generate({style: "vivid", moderation: "low", user: "u1", background: "auto", quality: "hd", some_future_field: {a: 1}})).status).toBe(200);
        const mj = await generate({model: "mj", negative_prompt: "x"});
        expect(mj.status).toBe(400);
        expect(mj.body.error).toMatchObject({param: "negative_prompt", code: "unsupported_parameter"});
    });

    it("the official client: OpenAI's model names as aliases, b64_json and usage", async () => {
        const response = await server.client.images.generate({model: "dall-e-3", prompt: "a red fox", size: "64x64" as "1024x1024", quality: "low"});
        expect(response.data).toHaveLength(1);
        expect(await decode(response.data![0].b64_json!)).toMatchObject({width: 64, height: 64});
        expect(response.usage?.input_tokens).toBe(5);
        // low quality = half the model's 4 steps.
        expect(engines.get("sd")!.jobs.at(-1)!.steps).toBe(2);
    });

    it("url links: served without the API key at an unguessable address, for 60 minutes, then gone", async () => {
        const {body} = await generate({response_format: "url", output_format: "webp", n: 2, seed: 3});
        expect(body.data[0].b64_json).toBeUndefined();
        const urls: string[] = body.data.map((item: {url: string}) => item.url);
        for (const url of urls)
            expect(url).toMatch(new RegExp(`^${server.url}/files/images/[0-9a-f]{32}\\.webp$`));
        const reference = (await generate({output_format: "webp", seed: 3})).body.data[0].b64_json;
        const fetched = await fetch(urls[0]);
        expect(fetched.status).toBe(200);
        expect(fetched.headers.get("content-type")).toBe("image/webp");
        expect(Buffer.from(await fetched.arrayBuffer()).toString("base64")).toBe(reference);

        clock.now += imageLinkTtlMs - 1;
        expect((await fetch(urls[1])).status).toBe(200);
        clock.now += 1;
        for (const url of urls) {
            const expired = await fetch(url);
            expect(expired.status).toBe(404);
            expect((await jsonOf(expired)).error.message).toContain("expired");
        }
        expect((await fetch(`${server.url}/files/images/${"0".repeat(32)}.png`)).status).toBe(404);
    });

    it("streams progress for every step, partial images spread over the steps, then the completed image (raw SSE)", async () => {
        const response = await server.post("/v1/images/generations", {model: "sd", prompt: "a red fox", stream: true, seed: 5, output_format: "jpeg"});
        expect(response.headers.get("content-type")).toContain("text/event-stream");
        const {events} = await readSse(response);
        expect(events.map((event) => event.event)).toEqual([
            "image_generation.progress", "image_generation.partial_image",
            "image_generation.progress", "image_generation.partial_image",
            "image_generation.progress", "image_generation.partial_image",
            "image_generation.progress", "image_generation.completed"
        ]);
        const data = events.map((event) => JSON.parse(event.data));
        data.forEach((item, index) => expect(item.type).toBe(events[index].event));
        const progress = data.filter((item) => item.type === "image_generation.progress");
        expect(progress.map((item) => [item.step, item.steps, item.progress])).toEqual([[1, 4, 0.25], [2, 4, 0.5], [3, 4, 0.75], [4, 4, 1]]);
        for (const item of progress) {
            expect(item.elapsed_ms).toBeGreaterThanOrEqual(0);
            expect(item.estimated_remaining_ms).toBeGreaterThanOrEqual(0);
        }
        const partials = data.filter((item) => item.type === "image_generation.partial_image");
        expect(partials.map((item) => item.partial_image_index)).toEqual([0, 1, 2]);
        for (const item of partials) {
            expect(item).toMatchObject({size: "64x64", quality: "medium", background: "opaque", output_format: "jpeg"});
            expect(item.created_at).toBeTypeOf("number");
            // Previews come half-size from the engine and are scaled to the request's size.
            expect(await decode(item.b64_json)).toMatchObject({format: "jpeg", width: 64, height: 64});
        }
        const completed = data.at(-1);
        expect(completed).toMatchObject({size: "64x64", quality: "medium", background: "opaque", output_format: "jpeg", seed: 5,
            usage: {input_tokens: 5, output_tokens: 64, total_tokens: 69, input_tokens_details: {text_tokens: 5, image_tokens: 0}}});
        const nonStreamed = (await generate({seed: 5, output_format: "jpeg"})).body.data[0].b64_json;
        expect(completed.b64_json).toBe(nonStreamed);
    });

    it("partial_images 0 streams progress and the image only", async () => {
        const {events} = await readSse(await server.post("/v1/images/generations", {model: "sd", prompt: "x", stream: true, partial_images: 0}));
        expect(events.map((event) => event.event)).toEqual([...Array(4).fill("image_generation.progress"), "image_generation.completed"]);
    });

    it("the official client parses the stream, the progress events included", async () => {
        const stream = await server.client.images.generate({model: "gpt-image-1", prompt: "a red fox", stream: true, partial_images: 2});
        const types: string[] = [];
        let final: string | undefined;
        for await (const event of stream) {
            types.push(event.type);
            if (event.type === "image_generation.completed")
                final = event.b64_json;
        }
        expect(types.filter((type) => type === "image_generation.partial_image")).toHaveLength(2);
        expect(types.filter((type) => type === "image_generation.progress")).toHaveLength(4);
        expect(types.at(-1)).toBe("image_generation.completed");
        expect(await decode(final!)).toMatchObject({width: 64, height: 64});
    });

    it("MidJourney style: one 2x2 grid of four seeds' images, streamed with progress and partial grids", async () => {
        const {body} = await generate({model: "mj"});
        expect(body.size).toBe("96x96");
        expect(body.data).toHaveLength(1);
        const {seed, seeds} = body.data[0];
        expect(seeds).toEqual([seed, seed + 1, seed + 2, seed + 3].map((value) => value % 2 ** 32));
        const job = engines.get("mj")!.jobs.at(-1)!;
        expect(job).toMatchObject({width: 48, height: 48, steps: 4, sampler: "Euler", guidanceScale: 0, seeds});
        const grid = await decode(body.data[0].b64_json);
        expect([grid.width, grid.height]).toEqual([96, 96]);
        seeds.forEach((tileSeed: number, index: number) => {
            const tile = pixels(job, tileSeed, "final", 48, 48).rgb;
            const [left, top] = [(index % 2) * 48, Math.floor(index / 2) * 48];
            for (const [x, y] of [[0, 0], [47, 0], [13, 29], [47, 47]]) {
                const at = ((top + y) * 96 + left + x) * 3;
                expect([...grid.rgb.subarray(at, at + 3)]).toEqual([...tile.subarray((y * 48 + x) * 3, (y * 48 + x) * 3 + 3)]);
            }
        });
        // usage: four 48x48 images = 4 * 36 latent positions.
        expect(body.usage.output_tokens).toBe(144);

        const {events} = await readSse(await server.post("/v1/images/generations", {model: "mj", prompt: "a red fox", stream: true}));
        const data = events.map((event) => JSON.parse(event.data));
        expect(data.filter((item) => item.type === "image_generation.progress")).toHaveLength(4);
        const partials = data.filter((item) => item.type === "image_generation.partial_image");
        expect(partials.map((item) => item.partial_image_index)).toEqual([0, 1, 2]);
        for (const item of [...partials, data.at(-1)])
            expect(await decode(item.b64_json)).toMatchObject({width: 96, height: 96});
        expect(data.at(-1)).toMatchObject({type: "image_generation.completed", size: "96x96"});
        expect(data.at(-1).seeds).toHaveLength(4);
    });

    it("a streaming client that disconnects stops the generation and frees the engine", async () => {
        const engine = engines.get("sd")!;
        const release = engine.hold();
        try {
            const aborts = engine.aborts.length;
            const controller = new AbortController();
            const response = await server.post("/v1/images/generations", {model: "sd", prompt: "x", stream: true, steps: 20}, {signal: controller.signal});
            await engine.parked();
            expect(await health("sd")).toMatchObject({busy: 1});
            // The first step's progress is on the wire before the client goes.
            const reader = response.body!.getReader();
            expect(new TextDecoder().decode((await reader.read()).value)).toContain("image_generation.progress");
            controller.abort();
            expect(await eventually(async () => (await health("sd")).busy === 0)).toBe(true);
            expect(engine.aborts.length).toBe(aborts + 1);
        } finally {
            release();
        }
    });

    it("a client that disconnects from a plain request frees the engine too", async () => {
        const engine = engines.get("sd")!;
        const release = engine.hold();
        try {
            const aborts = engine.aborts.length;
            const controller = new AbortController();
            const request = server.post("/v1/images/generations", {model: "sd", prompt: "x", steps: 20}, {signal: controller.signal}).catch(() => null);
            await engine.parked();
            controller.abort();
            await request;
            expect(await eventually(async () => (await health("sd")).busy === 0)).toBe(true);
            expect(engine.aborts.length).toBe(aborts + 1);
        } finally {
            release();
        }
    });

    it("a full queue is a 503 with Retry-After, streaming or not; the queued requests then complete", async () => {
        const engine = engines.get("sd")!;
        const release = engine.hold();
        const running = generate({seed: 1});
        await engine.parked();
        const queued = generate({seed: 2});
        expect(await eventually(async () => (await health("sd")).waiting === 1)).toBe(true);
        // Whether the engine throws at once or rejects its promise, a refused stream is a plain 503, not an error event.
        for (const rejectAsync of [false, true])
            for (const stream of [false, true]) {
                engine.rejectAsync = rejectAsync;
                const response = await server.post("/v1/images/generations", {model: "sd", prompt: "x", stream});
                expect(response.status).toBe(503);
                expect(response.headers.get("retry-after")).toBe("2");
                expect((await jsonOf(response)).error.code).toBe("server_overloaded");
            }
        engine.rejectAsync = false;
        release();
        expect((await running).status).toBe(200);
        expect((await queued).status).toBe(200);
        expect(await health("sd")).toEqual({parallel: 1, busy: 0, waiting: 0});
    });

    it("is listed in /v1/models with its endpoint", async () => {
        const models = await server.client.models.list();
        const sd = models.data.find((model) => model.id === "sd") as unknown as {endpoints: string[]};
        expect(sd.endpoints).toEqual(["/v1/images/generations"]);
    });
});

