import { AutoModelForImageTextToText, AutoProcessor, RawImage, type PreTrainedModel, type Processor, type Tensor } from "@huggingface/transformers";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { offlineTransformers } from "../../src/runtimes/onnx/offlineTransformers.js";
import { transformersInternals } from "../../src/runtimes/onnx/transformersInternals.js";
import { tinySmolVlmPath } from "../support/testModels.js";

/**
 * The generated SmolVLM-shaped model (test/support/onnx/makeTestSmolVlmOnnx.ts) is one transformers.js takes as it takes
 * onnx-community's SmolVLM exports: AutoProcessor (Idefics3Processor: chat template, image tokens, pixel values) and
 * AutoModelForImageTextToText (vision encoder, token embeddings, merged decoder with past key values) load it, and its
 * own generate() answers, the image changing the answer. The reference a vision engine's greedy tokens must match.
 */
const load = {local_files_only: true, device: "cpu", dtype: "fp32"} as const;
let processor: Processor;
let model: PreTrainedModel;

beforeAll(async () => {
    offlineTransformers();
    processor = await AutoProcessor.from_pretrained(tinySmolVlmPath, {local_files_only: true});
    model = await AutoModelForImageTextToText.from_pretrained(tinySmolVlmPath, load);
});
afterAll(() => model?.dispose());

async function plain(r: number, g: number, b: number, width = 40, height = 20) {
    const {data, info} = await sharp({create: {width, height, channels: 3, background: {r, g, b}}}).raw().toBuffer({resolveWithObject: true});
    return new RawImage(new Uint8ClampedArray(data), info.width, info.height, 3);
}

const prompt = () => processor.apply_chat_template([{role: "user", content: [{type: "image"}, {type: "text", text: "What is this?"}]}] as never, {add_generation_prompt: true}) as string;

async function greedy(image: RawImage): Promise<number[]> {
    const inputs = await processor(prompt(), [image]);
    const output = await model.generate({...inputs, max_new_tokens: 16, do_sample: false}) as Tensor;
    return (output.tolist() as bigint[][])[0].slice((inputs.input_ids as Tensor).dims[1]).map(Number);
}

describe("the generated SmolVLM-shaped test model in transformers.js", () => {
    it("renders its chat template with the image where the user put it, and the processor expands it into image_seq_len tokens", async () => {
        expect(prompt()).toBe("<|im_start|>User:<image>What is this?<end_of_utterance>\nAssistant:");
        const inputs = await processor(prompt(), [await plain(255, 0, 0)]);
        const ids = (inputs.input_ids as Tensor).tolist()[0] as bigint[];
        const imageToken = BigInt((model.config as unknown as {image_token_id: number}).image_token_id);
        expect(ids.filter((token) => token === imageToken)).toHaveLength(4);
        expect(ids).toHaveLength(38);
        expect((inputs.pixel_values as Tensor).dims).toEqual([1, 1, 3, 32, 32]);
    });

    it("transformersInternals.eosTokenIds reads generation_config.json's ends (<end_of_utterance>, <|endoftext|>)", () => {
        expect(transformersInternals.eosTokenIds(model)).toEqual([258, 256]);
    });

    it("generate() answers greedily, the same tokens each time, and another image changes them", async () => {
        const red = await greedy(await plain(255, 0, 0));
        expect(red).toHaveLength(16);
        expect(await greedy(await plain(255, 0, 0))).toEqual(red);
        expect(await greedy(await plain(0, 0, 255))).not.toEqual(red);
    });
});
