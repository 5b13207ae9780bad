import Anthropic from "@anthropic-ai/sdk";
import { AutoModelForImageTextToText, AutoProcessor, RawImage, type Tensor } from "@huggingface/transformers";
import OpenAI from "openai";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manifestFromPaths } from "../../src/capabilities/manifestFromPaths.js";
import { offlineTransformers } from "../../src/runtimes/onnx/offlineTransformers.js";
import { dataUrl, twoColourImage } from "../support/imageFixtures.js";
import { eventually } from "../support/eventually.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinySmolVlmEndlessPath, tinySmolVlmPath } from "../support/testModels.js";

// The vision engine on the generated SmolVLM-shaped model (test/support/onnx/makeTestSmolVlmOnnx.ts), through the
// official clients: its greedy answer is transformers.js's own generate() on the same image and prompt.
let server: TestServer;
let openai: OpenAI;
let red: Buffer;
let blue: Buffer;

beforeAll(async () => {
    [red, blue] = await Promise.all([twoColourImage("png", 40, 20), sharp({create: {width: 30, height: 30, channels: 3, background: {r: 0, g: 0, b: 255}}}).png().toBuffer()]);
    server = await startTestServer({models: [{id: "smolvlm", task: "chat", path: tinySmolVlmPath}, {id: "endless", task: "chat", path: tinySmolVlmEndlessPath}], config: {workers: 1}});
    openai = new OpenAI({baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0});
});
afterAll(() => server?.stop());

/** transformers.js's own greedy answer for the image and "What is this?" (the reference). */
async function reference(png: Buffer, maxTokens: number): Promise<string> {
    offlineTransformers();
    const processor = await AutoProcessor.from_pretrained(tinySmolVlmPath, {local_files_only: true});
    const model = await AutoModelForImageTextToText.from_pretrained(tinySmolVlmPath, {local_files_only: true, device: "cpu", dtype: "fp32"});
    try {
        const {data, info} = await sharp(png).removeAlpha().raw().toBuffer({resolveWithObject: true});
        const prompt = processor.apply_chat_template([{role: "user", content: [{type: "image"}, {type: "text", text: "What is this?"}]}] as never, {add_generation_prompt: true}) as string;
        const inputs = await processor(prompt, [new RawImage(new Uint8ClampedArray(data), info.width, info.height, 3)]);
        const output = await model.generate({...inputs, max_new_tokens: maxTokens, do_sample: false}) as Tensor;
        const ids = (output.tolist() as bigint[][])[0].slice((inputs.input_ids as Tensor).dims[1]);
        return processor.batch_decode([ids] as never, {skip_special_tokens: true})[0];
    } finally {
        await model.dispose();
    }
}

const ask = (png: Buffer, extra: Record<string, unknown> = {}) => openai.chat.completions.create({
    model: "smolvlm", max_tokens: 12, temperature: 0,
    messages: [{role: "user", content: [{type: "image_url", image_url: {url: dataUrl("image/png", png)}}, {type: "text", text: "What is this?"}]}],
    ...extra
} as OpenAI.ChatCompletionCreateParamsNonStreaming);

describe("the vision engine on a generated SmolVLM-shaped model", () => {
    it("is a chat model when its folder is served (`npm start -- <folder>`): config.json's SmolVLM architecture", () => {
        expect(manifestFromPaths([tinySmolVlmPath]).models.map(({task}) => task)).toEqual(["chat"]);
    });

    it("answers greedily what transformers.js's generate() answers, the image's tokens counted in prompt_tokens", async () => {
        const completion = await ask(red);
        expect(completion.choices[0].message.content).toBe(await reference(red, 12));
        expect(completion.usage!.prompt_tokens).toBe(38);
        expect(completion.usage!.completion_tokens).toBe(12);
        expect(completion.choices[0].finish_reason).toBe("length");
        expect((await ask(blue)).choices[0].message.content).not.toBe(completion.choices[0].message.content);
    });

    it("streams what it answers unstreamed", async () => {
        const stream = openai.chat.completions.stream({
            model: "smolvlm", max_tokens: 12, temperature: 0,
            messages: [{role: "user", content: [{type: "image_url", image_url: {url: dataUrl("image/png", red)}}, {type: "text", text: "What is this?"}]}]
        });
        const streamed = await stream.finalChatCompletion();
        expect(streamed.choices[0].message.content).toBe((await ask(red)).choices[0].message.content);
    });

    it("samples the same text for the same seed", async () => {
        const sampled = (seed: number) => ask(red, {temperature: 1, seed}).then((completion) => completion.choices[0].message.content);
        expect(await sampled(7)).toBe(await sampled(7));
    });

    it("a client that goes away mid-stream stops the generation between tokens; the engine is free again", async () => {
        const abort = new AbortController();
        const response = await fetch(`${server.url}/v1/chat/completions`, {method: "POST", signal: abort.signal, headers: {"Content-Type": "application/json"},
            // A model that never ends, asked for 900,000 tokens: only the cancel ends this generation within the test's time.
            body: JSON.stringify({model: "endless", stream: true, temperature: 1, seed: 3, max_tokens: 900_000,
                messages: [{role: "user", content: [{type: "image_url", image_url: {url: dataUrl("image/png", red)}}, {type: "text", text: "Tell a long story."}]}]})});
        expect(response.status).toBe(200);
        const reader = response.body!.getReader();
        expect(new TextDecoder().decode((await reader.read()).value)).toContain("chat.completion.chunk");
        abort.abort();
        expect(await eventually(async () => (await jsonOf(await fetch(`${server.url}/health`))).models.endless?.busy === 0, 2000, 5)).toBe(true);
        // The pool's one worker is free again: the other model answers.
        expect((await ask(red)).choices[0].message.content).toBe(await reference(red, 12));
    });

    it("refuses what it cannot do, naming the field", async () => {
        const refusal = (extra: Record<string, unknown>) => ask(red, extra).catch((error: unknown) => error);
        expect(await refusal({response_format: {type: "json_schema", json_schema: {name: "x", schema: {type: "object"}}}})).toMatchObject({status: 400, param: "response_format"});
        expect(await refusal({stop: ["."]})).toMatchObject({status: 400, param: "stop"});
    });

    it("answers the Anthropic SDK's base64 image block and the Responses API's input_image", async () => {
        const anthropic = new Anthropic({baseURL: server.url, apiKey: "unused", maxRetries: 0});
        // `temperature` (greedy here) is no longer in this SDK's request type; the API takes it, and the SDK sends it on.
        const message = await anthropic.messages.create({model: "smolvlm", max_tokens: 12, ...{temperature: 0} as object, messages: [{role: "user", content: [
            {type: "image", source: {type: "base64", media_type: "image/png", data: red.toString("base64")}}, {type: "text", text: "What is this?"}
        ]}]});
        const expected = await reference(red, 12);
        expect(message.content).toMatchObject([{type: "text", text: expected}]);
        const response = await openai.responses.create({model: "smolvlm", max_output_tokens: 12, temperature: 0, input: [{role: "user", content: [
            {type: "input_image", image_url: dataUrl("image/png", red), detail: "auto"}, {type: "input_text", text: "What is this?"}
        ]}]});
        expect(response.output_text).toBe(expected);
    });
});
