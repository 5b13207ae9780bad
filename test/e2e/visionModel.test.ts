import Anthropic from "@anthropic-ai/sdk";
import { AutoModelForImageTextToText, AutoProcessor, RawImage, type PreTrainedModel, type Processor, type Tensor } from "@huggingface/transformers";
import OpenAI from "openai";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manifestFromPaths } from "../../src/capabilities/manifestFromPaths.js";
import { offlineTransformers } from "../../src/runtimes/onnx/offlineTransformers.js";
import { dataUrl, twoColourImage } from "../support/imageFixtures.js";
import { eventually } from "../support/eventually.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath, tinySmolVlmEndlessPath, tinySmolVlmPath } from "../support/testModels.js";

// The vision engine on the generated SmolVLM-shaped model (test/support/onnx/makeTestSmolVlmOnnx.ts), through the
// official clients: its greedy answer is transformers.js's own generate() on the same image and prompt.
let server: TestServer;
let openai: OpenAI;
let red: Buffer;
let blue: Buffer;

beforeAll(async () => {
    [red, blue] = await Promise.all([twoColourImage("png", 40, 20), sharp({create: {width: 30, height: 30, channels: 3, background: {r: 0, g: 0, b: 255}}}).png().toBuffer()]);
    // A GGUF chat model beside them: the model the vision engine's refusals of constrained output name.
    server = await startTestServer({models: [{id: "smolvlm", task: "chat", path: tinySmolVlmPath}, {id: "endless", task: "chat", path: tinySmolVlmEndlessPath},
        {id: "tiny-chat", task: "chat", path: tinyChatModelPath},
        // The same folder (the same loaded model in the worker) with one place: more choices than that are refused.
        {id: "narrow", task: "chat", path: tinySmolVlmPath, parallel: 1}], config: {workers: 1}});
    openai = new OpenAI({baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0});
});
afterAll(async () => {
    await server?.stop();
    await (await loaded)?.model.dispose();
});

type ReferenceModel = {processor: Processor, model: PreTrainedModel};
let loaded: Promise<ReferenceModel> | undefined;

/** transformers.js itself on the generated model, loaded once for the file (the reference every answer is checked against). */
function referenceModel(): Promise<ReferenceModel> {
    offlineTransformers();
    return loaded ??= Promise.all([
        AutoProcessor.from_pretrained(tinySmolVlmPath, {local_files_only: true}),
        AutoModelForImageTextToText.from_pretrained(tinySmolVlmPath, {local_files_only: true, device: "cpu", dtype: "fp32"})
    ]).then(([processor, model]) => ({processor, model}));
}

/** The processor's inputs for the image and "What is this?" (or `question`), as a chat request's prompt. */
async function referenceInputs(png: Buffer, question = "What is this?") {
    const {processor} = await referenceModel();
    const {data, info} = await sharp(png).removeAlpha().raw().toBuffer({resolveWithObject: true});
    const prompt = processor.apply_chat_template([{role: "user", content: [{type: "image"}, {type: "text", text: question}]}] as never, {add_generation_prompt: true}) as string;
    return await processor(prompt, [new RawImage(new Uint8ClampedArray(data), info.width, info.height, 3)]) as Record<string, Tensor>;
}

/**
 * transformers.js's own greedy generate() for the image and "What is this?": its tokens and text, and each step's raw
 * logits (read by a processor of the test's, before `processors`, which the test writes from the documented rules).
 */
async function referenceRun(png: Buffer, maxTokens: number, processors: ((ids: bigint[][], logits: Tensor) => Tensor)[] = []) {
    const {processor, model} = await referenceModel();
    const inputs = await referenceInputs(png);
    const steps: Float32Array[] = [];
    const capture = (_ids: bigint[][], logits: Tensor) => {
        steps.push((logits.data as Float32Array).slice());
        return logits;
    };
    const output = await model.generate({...inputs, max_new_tokens: maxTokens, do_sample: false, logits_processor: [capture, ...processors]} as never) as Tensor;
    const ids = (output.tolist() as bigint[][])[0].slice(inputs.input_ids.dims[1]).map(Number);
    return {ids, steps, text: processor.batch_decode([ids] as never, {skip_special_tokens: true})[0], promptLength: inputs.input_ids.dims[1]};
}

/** transformers.js's own greedy answer for the image and "What is this?" (the reference). */
async function reference(png: Buffer, maxTokens: number): Promise<string> {
    return (await referenceRun(png, maxTokens)).text;
}

/** log-softmax of one step's logits, in float64. */
function logSoftmax(logits: Float32Array): number[] {
    const max = Math.max(...logits);
    const total = Math.log(logits.reduce((sum, value) => sum + Math.exp(value - max), 0)) + max;
    return [...logits].map((value) => value - total);
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

    it("refuses constrained output and tools (no grammar here), naming the field and the served models that can; never answers unconstrained", async () => {
        const refusal = (extra: Record<string, unknown>) => ask(red, extra).catch((error: unknown) => error);
        const served = "Served models that can: 'tiny-chat'.";
        for (const [extra, param] of [
            [{response_format: {type: "json_schema", json_schema: {name: "x", schema: {type: "object"}}}}, "response_format"],
            [{response_format: {type: "json_object"}, messages: [{role: "user", content: [{type: "image_url", image_url: {url: dataUrl("image/png", red)}}, {type: "text", text: "As json."}]}]}, "response_format"],
            [{tools: [{type: "function", function: {name: "f", parameters: {type: "object"}}}], tool_choice: "required"}, "tools"],
            // llama.cpp's samplers this engine does not have, by the name the client sent.
            [{min_p: 0.1}, "min_p"],
            [{repetition_penalty: 1.2}, "repetition_penalty"],
            [{repeat_penalty: 1.2}, "repeat_penalty"],
            [{ignore_eos: true}, "ignore_eos"]
        ] as const) {
            const error = await refusal(extra);
            expect(error).toMatchObject({status: 400, param});
            expect((error as Error).message).toContain(served);
        }
        const responses = await openai.responses.create({model: "smolvlm", max_output_tokens: 4, input: "Hi",
            text: {format: {type: "json_schema", name: "x", schema: {type: "object"}}}}).catch((error: unknown) => error);
        expect(responses).toMatchObject({status: 400, param: "text.format"});
        expect((responses as Error).message).toContain(served);
        // A raw prompt (legacy completions) has no chat template to put images in.
        expect(await openai.completions.create({model: "smolvlm", prompt: "Hi", max_tokens: 4}).catch((error: unknown) => error)).toMatchObject({status: 400, param: "prompt"});
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

describe("sampling, stop sequences, logprobs and n on the vision engine", () => {
    const content = (completion: OpenAI.ChatCompletion, index = 0) => completion.choices[index].message.content!;

    it("logit_bias: 100 makes a token the answer, -100 bans one (applied before the greedy pick, as the llama engine's)", async () => {
        // Byte-level tokens: the id of an ASCII character is its code.
        expect(content(await ask(red, {logit_bias: {[String("q".charCodeAt(0))]: 100}}))).toBe("q".repeat(12));
        const greedy = await reference(red, 12);
        const banned = content(await ask(red, {logit_bias: {[String(greedy.charCodeAt(0))]: -100}}));
        expect(banned).toHaveLength(12);
        expect(banned).not.toContain(greedy[0]);
    });

    it("frequency_penalty and presence_penalty: over the generated tokens only, llama.cpp's rule (greedy: transformers.js with that rule)", async () => {
        const promptLength = (await referenceInputs(red)).input_ids.dims[1];
        const penalize = (frequency: number, presence: number) => (ids: bigint[][], logits: Tensor) => {
            const scores = logits.data as Float32Array;
            const counts = new Map<number, number>();
            for (const id of ids[0].slice(promptLength))
                counts.set(Number(id), (counts.get(Number(id)) ?? 0) + 1);
            for (const [id, count] of counts)
                scores[id] -= count * frequency + presence;
            return logits;
        };
        for (const [frequency, presence] of [[2, 0], [0, 2], [1.5, -0.5]]) {
            const expected = await referenceRun(red, 24, [penalize(frequency, presence)]);
            const answer = await ask(red, {max_tokens: 24, frequency_penalty: frequency, presence_penalty: presence});
            expect(content(answer)).toBe(expected.text);
        }
        // They change this answer (it repeats tokens unpenalized).
        expect(content(await ask(red, {max_tokens: 24, frequency_penalty: 2}))).not.toBe(await reference(red, 24));
    });

    it("top_p and top_k sample from the most likely tokens alone: a tiny top_p or top_k 1 is the greedy answer at any seed", async () => {
        const greedy = await reference(red, 12);
        for (const seed of [1, 2, 3])
            expect(content(await ask(red, {temperature: 1.5, seed, top_p: 1e-6}))).toBe(greedy);
        const anthropic = new Anthropic({baseURL: server.url, apiKey: "unused", maxRetries: 0});
        const message = await anthropic.messages.create({model: "smolvlm", max_tokens: 12, ...{temperature: 1, top_k: 1} as object, messages: [{role: "user", content: [
            {type: "image", source: {type: "base64", media_type: "image/png", data: red.toString("base64")}}, {type: "text", text: "What is this?"}
        ]}]});
        expect(message.content).toMatchObject([{type: "text", text: greedy}]);
    });

    it("a seeded sample with top_p, penalties and a bias: the same seed the same text, another seed another", async () => {
        const sampled = (seed: number) => ask(red, {temperature: 1, seed, top_p: 0.9, presence_penalty: 0.5, frequency_penalty: 0.3, logit_bias: {"32": 2}}).then(content);
        const first = await sampled(11);
        expect(await sampled(11)).toBe(first);
        expect(await sampled(12)).not.toBe(first);
    });

    it("stop: the text ends before the first stop sequence, finish_reason stop, streamed and unstreamed alike", async () => {
        const greedy = await reference(red, 24);
        // A stop sequence from the middle of the greedy answer, and one that never matches but starts like it.
        const stop = greedy.slice(6, 9);
        const cut = greedy.indexOf(stop);
        const request = {model: "smolvlm", max_tokens: 24, temperature: 0, stop: [stop, stop + "\u0000never"],
            messages: [{role: "user" as const, content: [{type: "image_url" as const, image_url: {url: dataUrl("image/png", red)}}, {type: "text" as const, text: "What is this?"}]}]};
        const answer = await openai.chat.completions.create(request);
        expect(content(answer)).toBe(greedy.slice(0, cut));
        expect(answer.choices[0].finish_reason).toBe("stop");
        // The tokens up to the one that completed the stop sequence.
        expect(answer.usage!.completion_tokens).toBe(cut + stop.length);
        const stream = await openai.chat.completions.create({...request, stream: true});
        const pieces: string[] = [];
        let finish: string | null = null;
        for await (const chunk of stream) {
            pieces.push(chunk.choices[0]?.delta?.content ?? "");
            finish = chunk.choices[0]?.finish_reason ?? finish;
        }
        expect(pieces.join("")).toBe(greedy.slice(0, cut));
        expect(finish).toBe("stop");
    });

    it("logprobs: the log-softmax of the model's raw logits at each step (transformers.js's), the top alternatives most likely first, each token's bytes", async () => {
        const expected = await referenceRun(red, 12);
        const answer = await ask(red, {logprobs: true, top_logprobs: 3});
        const entries = answer.choices[0].logprobs!.content!;
        expect(entries.map((entry) => entry.token).join("")).toBe(expected.text);
        expect(entries).toHaveLength(12);
        entries.forEach((entry, step) => {
            const logprobs = logSoftmax(expected.steps[step]);
            const id = expected.ids[step];
            expect(entry.logprob).toBeCloseTo(logprobs[id], 5);
            expect(entry.bytes).toEqual([...Buffer.from(entry.token)]);
            const top = [...logprobs.keys()].sort((a, b) => logprobs[b] - logprobs[a]).slice(0, 3);
            expect(entry.top_logprobs.map((alternative) => alternative.bytes)).toEqual(top.map((token) => token < 256 ? [token] : expect.anything()));
            entry.top_logprobs.forEach((alternative, rank) => expect(alternative.logprob).toBeCloseTo(logprobs[top[rank]], 5));
        });
        // Sampled (with a bias and top_p), the values are still the raw distribution's.
        const sampled = await ask(red, {temperature: 1, seed: 5, top_p: 0.8, logit_bias: {"97": 3}, logprobs: true, top_logprobs: 0});
        const sampledEntries = sampled.choices[0].logprobs!.content!;
        const {steps} = await referenceRun(red, 1);
        expect(sampledEntries[0].logprob).toBeCloseTo(logSoftmax(steps[0])[sampledEntries[0].bytes![0]], 5);
        expect(sampledEntries[0].top_logprobs).toEqual([]);
        // Streamed: the same entries.
        const streamed = await openai.chat.completions.stream({model: "smolvlm", max_tokens: 12, temperature: 0, logprobs: true, top_logprobs: 3,
            messages: [{role: "user", content: [{type: "image_url", image_url: {url: dataUrl("image/png", red)}}, {type: "text", text: "What is this?"}]}]}).finalChatCompletion();
        expect(streamed.choices[0].logprobs!.content).toEqual(entries);
        // The Responses API carries them on its output text.
        const response = await openai.responses.create({model: "smolvlm", max_output_tokens: 12, temperature: 0, top_logprobs: 3, include: ["message.output_text.logprobs"],
            input: [{role: "user", content: [{type: "input_image", image_url: dataUrl("image/png", red), detail: "auto"}, {type: "input_text", text: "What is this?"}]}]});
        const message = response.output.find((item) => item.type === "message") as OpenAI.Responses.ResponseOutputMessage;
        const text = message.content[0] as OpenAI.Responses.ResponseOutputText;
        expect(text.logprobs!.map(({token, logprob}) => ({token, logprob}))).toEqual(entries.map(({token, logprob}) => ({token, logprob})));
        expect(text.logprobs!.map(({top_logprobs}) => top_logprobs.length)).toEqual(entries.map(() => 3));
    });

    it("n: several choices of one prompt, each with its own seed (choice 0 is the n=1 answer), streamed as answered", async () => {
        const several = await ask(red, {temperature: 1, seed: 21, n: 2});
        expect(several.choices.map((choice) => choice.index)).toEqual([0, 1]);
        expect(content(several, 0)).toBe(content(await ask(red, {temperature: 1, seed: 21})));
        expect(new Set(several.choices.map((choice) => choice.message.content)).size).toBe(2);
        expect(several.usage!.completion_tokens).toBe(24);
        const streamed = await openai.chat.completions.stream({model: "smolvlm", max_tokens: 12, temperature: 1, seed: 21, n: 2,
            messages: [{role: "user", content: [{type: "image_url", image_url: {url: dataUrl("image/png", red)}}, {type: "text", text: "What is this?"}]}]}).finalChatCompletion();
        expect(streamed.choices.map((choice) => choice.message.content)).toEqual(several.choices.map((choice) => choice.message.content));
        // Each choice takes one of the model's `parallel` places, as on the llama engine: more choices than places is a 400 naming `n`.
        const refused = await ask(red, {model: "narrow", n: 2}).catch((error: unknown) => error);
        expect(refused).toMatchObject({status: 400, param: "n"});
        expect((refused as Error).message).toContain("'n' is 2, but model 'narrow' is configured with 1 parallel sequence");
    });
});

describe("tokenize and detokenize on the vision model (its tokenizer, in the worker)", () => {
    const post = async (route: string, body: unknown) => {
        const response = await fetch(`${server.url}${route}`, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
        return {status: response.status, body: await jsonOf(response)};
    };

    it("a text's tokens are its tokenizer's (special-token text read as those tokens), with llama-server's pieces; detokenize writes them back", async () => {
        const {processor} = await referenceModel();
        const text = "Hi é<end_of_utterance>";
        const expected = processor.tokenizer!.encode(text, {add_special_tokens: false});
        const {status, body} = await post("/v1/tokenize", {model: "smolvlm", content: text, with_pieces: true});
        expect(status).toBe(200);
        expect(body.tokens.map((token: {id: number}) => token.id)).toEqual(expected);
        // "é" is two byte tokens, neither valid UTF-8 alone: their pieces are the bytes.
        expect(body.tokens.map((token: {piece: unknown}) => token.piece)).toEqual(["H", "i", " ", [0xC3], [0xA9], "<end_of_utterance>"]);
        expect(body.count).toBe(expected.length);
        expect((await post("/detokenize", {model: "smolvlm", tokens: expected})).body.content).toBe(text);
        expect((await post("/tokenize", {model: "smolvlm", content: text})).body.tokens).toEqual(expected);
    });

    it("a conversation's tokens are the chat request's prompt, the image's tokens included", async () => {
        const inputs = await referenceInputs(red);
        const {body} = await post("/v1/tokenize", {model: "smolvlm", messages: [{role: "user", content: [
            {type: "image_url", image_url: {url: dataUrl("image/png", red)}}, {type: "text", text: "What is this?"}]}]});
        expect(body.tokens).toEqual([...inputs.input_ids.data as BigInt64Array].map(Number));
        expect(body.count).toBe((await ask(red)).usage!.prompt_tokens);
    });

    it("refuses parse_special: false (transformers.js's tokenizer always reads special-token text), naming it", async () => {
        expect(await post("/v1/tokenize", {model: "smolvlm", content: "x", parse_special: false})).toMatchObject({status: 400, body: {error: {param: "parse_special"}}});
    });
});

describe("decisions on the vision model (input_image in /v1/decisions)", () => {
    /** The label tokens' probabilities after the question, normalised over them: a softmax over their logits, by transformers.js directly. */
    async function labelSoftmax(png: Buffer, question: string, labels: string[]): Promise<number[]> {
        const {steps} = await (async () => {
            const {model} = await referenceModel();
            const inputs = await referenceInputs(png, "What is this?\n\n" + question);
            const captured: Float32Array[] = [];
            await model.generate({...inputs, max_new_tokens: 1, do_sample: false, logits_processor: [(_ids: bigint[][], logits: Tensor) => {
                captured.push((logits.data as Float32Array).slice());
                return logits;
            }]} as never);
            return {steps: captured};
        })();
        // Byte-level tokens: a one-character label's token is its character's code.
        const logits = labels.map((label) => steps[0][label.charCodeAt(0)]);
        const max = Math.max(...logits);
        const total = logits.reduce((sum, value) => sum + Math.exp(value - max), 0);
        return logits.map((value) => Math.exp(value - max) / total);
    }

    const ask = (png: Buffer) => openai.decisions.create({
        model: "smolvlm",
        input: [{role: "user", content: [{type: "input_image", image_url: dataUrl("image/png", png)}, {type: "input_text", text: "What is this?"}]}],
        questions: [{type: "choice", instructions: "Which colour is it?", choices: [{value: "red"}, {value: "blue"}, {value: "green"}]}]
    });

    it("each option's probability: the label tokens' softmax after the question with the image, averaged over the given and the reversed order", async () => {
        const decision = await ask(red);
        const answer = decision.answers[0] as OpenAI.Decision.AnswerResourceChoice;
        const text = (options: string[]) => `Which colour is it?\n\nOptions:\n${options.map((option, index) => `${"ABC"[index]}. ${option}`).join("\n")}\n\nAnswer with the label of one option (A, B, C) and nothing else.`;
        const given = await labelSoftmax(red, text(["red", "blue", "green"]), ["A", "B", "C"]);
        const reversed = await labelSoftmax(red, text(["green", "blue", "red"]), ["A", "B", "C"]);
        const expected = [(given[0] + reversed[2]) / 2, (given[1] + reversed[1]) / 2, (given[2] + reversed[0]) / 2];
        expect(answer.probabilities.map(({value}) => value)).toEqual(["red", "blue", "green"]);
        answer.probabilities.forEach(({probability}, index) => expect(Math.abs(probability - expected[index])).toBeLessThan(1e-6));
        expect(answer.probabilities.reduce((sum, {probability}) => sum + probability, 0)).toBeCloseTo(1, 12);
        expect(answer.choice).toBe(["red", "blue", "green"][expected.indexOf(Math.max(...expected))]);
        // The image is in the prompt: its tokens counted, and another image answers otherwise.
        expect(decision.usage.input_tokens).toBeGreaterThan(38);
        const other = (await ask(blue)).answers[0] as OpenAI.Decision.AnswerResourceChoice;
        expect(other.probabilities.map(({probability}) => probability)).not.toEqual(answer.probabilities.map(({probability}) => probability));
    });

    it("more options than single labels: two-token labels (a letter, then a digit), the probabilities still summing to 1", async () => {
        const choices = Array.from({length: 70}, (_, index) => ({value: `option ${index}`}));
        const decision = await openai.decisions.create({model: "smolvlm", input: [{role: "user", content: [
            {type: "input_image", image_url: dataUrl("image/png", red)}, {type: "input_text", text: "What is this?"}]}],
        questions: [{type: "choice", instructions: "Which one?", choices}]});
        const answer = decision.answers[0] as OpenAI.Decision.AnswerResourceChoice;
        expect(answer.probabilities).toHaveLength(70);
        expect(answer.probabilities.reduce((sum, {probability}) => sum + probability, 0)).toBeCloseTo(1, 12);
        expect(new Set(answer.probabilities.map(({probability}) => probability)).size).toBeGreaterThan(1);
    });
});

describe("images in /v1/systemone state (TypeSafe's assets, referenced by their keys in the state)", () => {
    const systemOne = async (body: Record<string, unknown>) => {
        const response = await fetch(`${server.url}/v1/systemone`, {method: "POST", headers: {"Content-Type": "application/json", "TypeSafe-Danger-Zone-Images": "true"},
            body: JSON.stringify(body)});
        return {status: response.status, body: await response.json() as Record<string, any>};
    };
    const asset = (png: Buffer) => ({type: "image", format: "png", data_base64: png.toString("base64")});
    const colour = {type: "choice", instructions: "Which colour is `photo`?", criteria: {red: null, blue: null, green: null}};

    it("answers as /v1/decisions does with the image where the state names its asset", async () => {
        const state = {photo: "photo-7f3a9c", note: "a picture"};
        const answered = await systemOne({model: "smolvlm", state, assets: {"photo-7f3a9c": asset(red)}, questions: {colour}});
        expect(answered.status).toBe(200);
        // The same question asked through /v1/decisions: the state's JSON text cut after the key, the image there.
        const text = JSON.stringify(state, null, 2);
        const cut = text.indexOf("photo-7f3a9c") + "photo-7f3a9c".length;
        const decision = await openai.decisions.create({model: "smolvlm", input: [{role: "user", content: [
            {type: "input_text", text: text.slice(0, cut)}, {type: "input_image", image_url: dataUrl("image/png", red)}, {type: "input_text", text: text.slice(cut)}]}],
        questions: [{type: "choice", name: "colour", instructions: "Which colour is `photo`?", choices: [{value: "red"}, {value: "blue"}, {value: "green"}]}]});
        const expected = decision.answers[0] as OpenAI.Decision.AnswerResourceChoice;
        expect(answered.body.answers.colour.probabilities).toEqual(Object.fromEntries(expected.probabilities.map(({value, probability}) => [value, probability])));
        expect(answered.body.usage.input_tokens).toBe(decision.usage.input_tokens);
        // Without the image the prompt is shorter and the answer another.
        const plain = await systemOne({model: "smolvlm", state, questions: {colour}});
        expect(plain.body.usage.input_tokens).toBeLessThan(answered.body.usage.input_tokens);
        expect(plain.body.answers.colour.probabilities).not.toEqual(answered.body.answers.colour.probabilities);
    });

    it("refuses, naming the asset: one the state never names, a format other than PNG or JPEG, bytes that are not the format, a model that does not see", async () => {
        const unnamed = await systemOne({model: "smolvlm", state: {photo: "photo-1"}, assets: {"photo-1": asset(red), "photo-2": asset(blue)}, questions: {colour}});
        expect(unnamed.status).toBe(400);
        expect(unnamed.body.error).toMatchObject({param: "assets.photo-2", message: expect.stringContaining("never mentions")});
        const gif = await systemOne({model: "smolvlm", state: "see photo-1", assets: {"photo-1": {...asset(red), format: "gif"}}, questions: {colour}});
        expect(gif.status).toBe(400);
        expect(gif.body.error.param).toMatch(/^assets\.photo-1/);
        const notPng = await systemOne({model: "smolvlm", state: "see photo-1", assets: {"photo-1": {format: "png", data_base64: Buffer.from("not a png at all").toString("base64")}}, questions: {colour}});
        expect(notPng.status).toBe(400);
        expect(notPng.body.error.param).toBe("assets.photo-1");
        const textOnly = await systemOne({model: "tiny-chat", state: "see photo-1", assets: {"photo-1": asset(red)}, questions: {colour}});
        expect(textOnly.status).toBe(400);
        expect(textOnly.body.error).toMatchObject({param: "assets.photo-1", code: "model_not_multimodal"});
    });
});

