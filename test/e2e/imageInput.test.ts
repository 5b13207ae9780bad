import { fileURLToPath } from "node:url";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatJob, ChatRun, ChatRunHooks, TurnImage } from "../../src/capabilities/chat/ChatEngine.js";
import { decodeChatImages, type ImagePixels } from "../../src/capabilities/chat/vision/decodeChatImages.js";
import { WorkerPool } from "../../src/core/workers/WorkerPool.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { dataUrl, pngHeaderOnly, twoColourImage } from "../support/imageFixtures.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { storiesModelPath } from "../support/testModels.js";

// Image parts on every wire format, sent by the official clients unchanged: a text-only model refuses them naming the
// part and the model that sees; a scripted engine that sees gets them as its job's images and decodes them in the
// worker pool as a vision engine does (so the pixel limit's refusal travels back through each format's error shape).
const pool = new WorkerPool({workers: 1});

/** A scripted engine that takes images: each job's images are decoded in the pool before it "generates". */
class SeeingFakeEngine extends FakeChatEngine {
    readonly decoded: ImagePixels[][] = [];

    override async submit(job: ChatJob, hooks: ChatRunHooks): Promise<ChatRun> {
        this.decoded.push(await decodeChatImages(pool, job.turns.flatMap((turn) => turn.images ?? []).map(({image}) => image), hooks.signal));
        return super.submit(job, hooks);
    }
}

const key = "sk-vision";
let server: TestServer;
let openai: OpenAI;
let anthropic: Anthropic;
const eyes = new SeeingFakeEngine("eyes", {pieces: ["A red", " and a blue half."], info: {vision: true}});
const text = new FakeChatEngine("text", {pieces: ["Hi"]});
let png: Buffer;
let jpeg: Buffer;
const bomb = pngHeaderOnly(10_000, 10_000);

beforeAll(async () => {
    [png, jpeg] = await Promise.all([twoColourImage("png", 40, 20), twoColourImage("jpeg", 30, 30)]);
    server = await startTestServer({
        models: [
            {id: "text", task: "chat", path: storiesModelPath},
            // A chat model given as a folder is a vision model (visionModelIds): the engine here is scripted.
            {id: "eyes", task: "chat", path: fileURLToPath(new URL("../fixtures/templates", import.meta.url))}
        ],
        config: {apiKeys: [key]},
        apiKey: key,
        factories: {chat: async (entry) => entry.id === "eyes" ? eyes : text}
    });
    openai = new OpenAI({baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0});
    anthropic = new Anthropic({baseURL: server.url, apiKey: key, maxRetries: 0});
});

afterAll(async () => {
    await server?.stop();
    await pool.close();
});

const lastImages = (engine: FakeChatEngine): TurnImage[] => engine.jobs.at(-1)!.turns.flatMap((turn) => turn.images ?? []);
const bytesOf = (image: TurnImage) => Buffer.from(image.image.base64, "base64");

describe("chat completions: image_url parts (openai client)", () => {
    it("reach a model that sees as the turn's images, where they stand in its text, decoded in a worker", async () => {
        const completion = await openai.chat.completions.create({model: "eyes", messages: [{role: "user", content: [
            {type: "text", text: "What is in "},
            {type: "image_url", image_url: {url: dataUrl("image/png", png), detail: "high"}},
            {type: "text", text: " and "},
            {type: "image_url", image_url: {url: dataUrl("image/jpeg", jpeg)}}
        ]}]});
        expect(completion.choices[0].message.content).toBe("A red and a blue half.");
        const turn = eyes.jobs.at(-1)!.turns[0];
        expect(turn.content).toBe("What is in  and ");
        expect(turn.images!.map(({offset, image}) => [offset, image.type, image.detail])).toEqual([[11, "image/png", "high"], [16, "image/jpeg", "auto"]]);
        expect(bytesOf(turn.images![0]).equals(png)).toBe(true);
        expect(eyes.decoded.at(-1)!.map(({width, height}) => [width, height])).toEqual([[40, 20], [30, 30]]);
    });

    it("are refused by a text-only model naming the part and the model that sees", async () => {
        const error = await openai.chat.completions.create({model: "text", messages: [{role: "user", content: [
            {type: "text", text: "see"}, {type: "image_url", image_url: {url: dataUrl("image/png", png)}}
        ]}]}).catch((thrown: unknown) => thrown);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect(error).toMatchObject({status: 400, param: "messages[0].content[1]", code: "model_not_multimodal"});
        expect((error as Error).message).toContain("models served here that do: 'eyes'");
    });

    it("a remote URL is refused, never fetched; an image past the pixel limit is refused from the worker, naming the part", async () => {
        const ask = (url: string) => openai.chat.completions.create({model: "eyes", messages: [{role: "user", content: [{type: "image_url", image_url: {url}}]}]})
            .catch((thrown: unknown) => thrown);
        expect(await ask("http://127.0.0.1:1/secret.png")).toMatchObject({status: 400, param: "messages[0].content[0].image_url.url", code: "image_url_not_supported"});
        const tooLarge = await ask(dataUrl("image/png", bomb));
        expect(tooLarge).toMatchObject({status: 400, param: "messages[0].content[0]", code: "image_too_large"});
        expect((tooLarge as Error).message).toContain("10000x10000");
    });

    it("a streamed request past the pixel limit is refused before any header", async () => {
        const response = await server.post("/v1/chat/completions", {model: "eyes", stream: true, messages: [{role: "user", content: [{type: "image_url", image_url: {url: dataUrl("image/png", bomb)}}]}]});
        expect(response.status).toBe(400);
        expect((await jsonOf(response)).error.param).toBe("messages[0].content[0]");
    });
});

describe("Responses: input_image parts (openai client)", () => {
    it("reach a model that sees", async () => {
        const response = await openai.responses.create({model: "eyes", input: [{role: "user", content: [
            {type: "input_text", text: "Describe"}, {type: "input_image", image_url: dataUrl("image/png", png), detail: "low"}
        ]}]});
        expect(response.output_text).toBe("A red and a blue half.");
        const [image] = lastImages(eyes);
        expect([image.offset, image.image.detail, bytesOf(image).equals(png)]).toEqual([8, "low", true]);
    });

    it("are refused in the Responses request's words: the text model, a remote URL, a file id, the pixel limit", async () => {
        const ask = (model: string, part: Record<string, unknown>) => openai.responses.create({model, input: [{role: "user", content: [
            {type: "input_text", text: "Describe"}, {type: "input_image", detail: "auto", ...part} as never
        ]}]}).catch((thrown: unknown) => thrown);
        expect(await ask("text", {image_url: dataUrl("image/png", png)})).toMatchObject({status: 400, param: "input[0].content[1]", code: "model_not_multimodal"});
        expect(await ask("eyes", {image_url: "https://example.com/a.png"})).toMatchObject({status: 400, param: "input[0].content[1].image_url"});
        expect(await ask("eyes", {file_id: "file-abc"})).toMatchObject({status: 400, param: "input[0].content[1].type", code: "unsupported_content_part"});
        expect(await ask("eyes", {image_url: dataUrl("image/png", bomb)})).toMatchObject({status: 400, param: "input[0].content[1]", code: "image_too_large"});
    });
});

describe("Messages: image blocks (@anthropic-ai/sdk)", () => {
    it("a base64 image block reaches a model that sees, between the turn's text blocks", async () => {
        const message = await anthropic.messages.create({model: "eyes", max_tokens: 20, messages: [{role: "user", content: [
            {type: "text", text: "Look:"},
            {type: "image", source: {type: "base64", media_type: "image/jpeg", data: jpeg.toString("base64")}},
            {type: "text", text: "What colours?"}
        ]}]});
        expect(message.content).toMatchObject([{type: "text", text: "A red and a blue half."}]);
        const turn = eyes.jobs.at(-1)!.turns[0];
        expect(turn.content).toBe("Look:\n\nWhat colours?");
        expect(turn.images!.map(({offset, image}) => [offset, image.type])).toEqual([[5, "image/jpeg"]]);
        expect(bytesOf(turn.images![0]).equals(jpeg)).toBe(true);
    });

    it("refusals in Anthropic's shape, naming the block", async () => {
        const ask = (model: string, source: Anthropic.ImageBlockParam["source"]) => anthropic.messages.create({model, max_tokens: 5, messages: [{role: "user", content: [
            {type: "text", text: "Look:"}, {type: "image", source}
        ]}]}).catch((thrown: unknown) => thrown as InstanceType<typeof Anthropic.APIError>);
        const blind = await ask("text", {type: "base64", media_type: "image/png", data: png.toString("base64")});
        expect(blind).toBeInstanceOf(Anthropic.BadRequestError);
        expect(blind).toMatchObject({status: 400, error: {type: "error", error: {type: "invalid_request_error"}}});
        expect((blind as Error).message).toContain("messages.0.content.1: The model 'text' does not take images");
        expect((await ask("eyes", {type: "url", url: "https://example.com/a.png"}) as Error).message).toContain("messages.0.content.1.source: Invalid 'messages.0.content.1.source': image URLs are not fetched");
        expect((await ask("eyes", {type: "base64", media_type: "image/png", data: bomb.toString("base64")}) as Error).message).toContain("messages.0.content.1: Invalid 'messages.0.content.1': the image is 10000x10000 pixels");
        expect((await ask("eyes", {type: "base64", media_type: "image/gif", data: png.toString("base64")}) as Error).message).toContain("messages.0.content.1: Invalid 'messages.0.content.1': the data is a 'image/png' image, not 'image/gif'");
        expect((await ask("eyes", {type: "base64", media_type: "image/bmp" as never, data: png.toString("base64")}) as Error).message).toContain("messages.0.content.1.source.media_type");
    });

    it("count_tokens refuses an image for a text-only model too", async () => {
        const error = await anthropic.messages.countTokens({model: "text", messages: [{role: "user", content: [
            {type: "image", source: {type: "base64", media_type: "image/png", data: png.toString("base64")}}
        ]}]}).catch((thrown: unknown) => thrown);
        expect(error).toMatchObject({status: 400});
        expect((error as Error).message).toContain("messages.0.content.0: The model 'text' does not take images");
    });
});

describe("Decisions: input_image", () => {
    const question = {type: "predicate", instructions: "Is the left half red?"};
    const post = (model: string, content: unknown[]) => server.post("/v1/decisions", {model, input: [{role: "user", content}], questions: [question]});

    it("reaches a model that sees, and a text-only one refuses it naming the part", async () => {
        const seen = await post("eyes", [{type: "input_text", text: "This picture:"}, {type: "input_image", image_url: dataUrl("image/png", png)}]);
        expect(seen.status).toBe(200);
        const [image] = eyes.decisionJobs.at(-1)!.turns[0].images!;
        expect([image.offset, bytesOf(image).equals(png)]).toEqual([13, true]);
        const refused = await post("text", [{type: "input_image", image_url: dataUrl("image/png", png)}]);
        expect(refused.status).toBe(400);
        expect((await jsonOf(refused)).error).toMatchObject({param: "input[0].content[0]", code: "model_not_multimodal"});
    });
});
