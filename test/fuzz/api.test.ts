import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { FakeImageEngine } from "../support/FakeImageEngine.js";
import { FakeSpeechEngine } from "../support/FakeSpeechEngine.js";
import { eventually } from "../support/eventually.js";
import { tinyBertPath, tinyChatModelPath, tinyCrossEncoderPath, tinyKokoroPath, tinyRerankerGgufPath, tinySdPath, tinyToolsModelPath } from "../support/testModels.js";
import { loadCapabilities } from "../../src/capabilities/capabilities.js";
import type { Capability } from "../../src/capabilities/Capability.js";
import { chatCapability } from "../../src/capabilities/chat/chatCapability.js";
import { defaultConfig } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { checkAnswer, combinedBody, mutatedBody, type Mutation } from "./requestFuzz.js";

const capabilities = await loadCapabilities();

// Property: whatever the body, the answer is a 2xx or an OpenAI-shaped 4xx naming the field at fault;
// never a 5xx; the server stays healthy with nothing busy. Seeded, so a failure is reproducible
// (fast-check prints the seed and the shrunk counterexample). `npm test` runs FUZZ_RUNS (default 200)
// cases per endpoint (fewer where a case costs a real model's run: see `runsFor`); `npm run fuzz` runs thousands.
const runs = Number(process.env.FUZZ_RUNS ?? 200);
const seed = Number(process.env.FUZZ_SEED ?? 20261123);
/** Cases for an endpoint whose case costs more: `factor` of FUZZ_RUNS, at least one. */
const runsFor = (factor: number) => Math.max(1, Math.ceil(runs * factor));

/**
 * Speech and images through their real capabilities (schema, mappers, handlers, encoders), with
 * model-free engines for the "fake-*" entries (fast enough for hundreds of cases) and the real
 * worker-pool engines on the tiny generated models for the others.
 */
const withFakeEngines: readonly Capability[] = capabilities.map((capability) => {
    if (capability.task === "speech")
        return {...capability, createEngine: (entry, context) => entry.id.startsWith("fake")
            ? Promise.resolve(new FakeSpeechEngine(entry.id, {sampleRate: 24_000, hasSpeedInput: true, parallel: 2}))
            : capability.createEngine(entry, context)} satisfies Capability;
    if (capability.task === "image")
        return {...capability, createEngine: (entry, context) => entry.id.startsWith("fake")
            // Small size bounds keep a fuzzed "1024x1024" from encoding megapixels per case.
            ? Promise.resolve(new FakeImageEngine(entry.id, {sizeBounds: {min: 32, max: 128, multiple: 8}}))
            : capability.createEngine(entry, context)} satisfies Capability;
    return capability;
});

let server: TestServer;
beforeAll(async () => {
    server = await startTestServer({
        models: [
            {id: "fake", task: "chat", path: tinyChatModelPath, aliases: ["gpt-4o-mini"]},
            {id: "tiny-bert", task: "embeddings", path: tinyBertPath, maxInputTokens: 64},
            {id: "tiny-cross-encoder", task: "rerank", path: tinyCrossEncoderPath},
            {id: "tiny-reranker", task: "rerank", path: tinyRerankerGgufPath, maxInputTokens: 64},
            // A real engine too: grammars, tool templates and the context check only exist there.
            {id: "real", task: "chat", path: tinyToolsModelPath, contextSize: 256, parallel: 2},
            {id: "fake-speech", task: "speech", path: tinyKokoroPath, aliases: ["tts-1"]},
            {id: "tiny-kokoro", task: "speech", path: tinyKokoroPath},
            {id: "fake-sd", task: "image", path: tinySdPath, aliases: ["dall-e-2"], defaults: {steps: 3}},
            {id: "fake-mj", task: "image", path: tinySdPath, parameterSet: "midjourney", defaults: {steps: 2, sampler: "Euler", size: "48x48", guidanceScale: 0}},
            {id: "tiny-sd", task: "image", path: tinySdPath, defaults: {steps: 1}},
            {id: "tiny-mj", task: "image", path: tinySdPath, parameterSet: "midjourney", defaults: {steps: 1, sampler: "Euler a"}}
        ],
        config: {workers: 1, onnxThreads: 1},
        capabilities: withFakeEngines,
        factories: {chat: async (entry) => entry.id === "fake"
            ? new FakeChatEngine("fake", {pieces: ["fu", "zz"]})
            : (chatCapability as Capability).createEngine(entry, {config: defaultConfig, logger: createLogger("silent"), workers: () => {
                throw new Error("chat needs no worker pool");
            }})}
    });
});
afterAll(() => server.stop());

/** Nothing busy or waiting on any model once every answer was read (the last sequence is freed just after its last byte). */
async function expectIdle() {
    let models: Record<string, {busy: number, waiting: number}> = {};
    let status = "";
    const idle = await eventually(async () => {
        const health = await (await fetch(`${server.url}/health`)).json() as {status: string, models: typeof models};
        ({models, status} = health);
        return status === "ok" && Object.values(models).every((load) => load.busy === 0 && load.waiting === 0);
    });
    expect(idle, JSON.stringify({status, models})).toBe(true);
}

/** Answers by property and status, printed at the end with FUZZ_STATS=1 (the README's figures). */
const tally = new Map<string, Map<number, number>>();
function count(label: string, status: number) {
    const statuses = tally.get(label) ?? new Map<number, number>();
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    tally.set(label, statuses);
}
afterAll(() => {
    if (process.env.FUZZ_STATS == null)
        return;
    for (const [label, statuses] of tally)
        console.log(`${label}: ${[...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status} x${n}`).join(", ")}`);
});

async function send(label: string, path: string, mutation: Mutation) {
    const response = await fetch(`${server.url}${path}`, {method: "POST", headers: {"Content-Type": mutation.contentType}, body: mutation.body});
    count(label, response.status);
    return checkAnswer(response, mutation, path.startsWith("/v1/messages") ? "anthropic" : "openai");
}

const chatBase = {model: "fake", messages: [{role: "user", content: "hi"}], max_tokens: 5};
const chatFields = ["model", "messages", "temperature", "top_p", "max_tokens", "max_completion_tokens", "n", "stop", "seed",
    "frequency_penalty", "presence_penalty", "logit_bias", "response_format", "stream", "stream_options", "tools", "tool_choice",
    "parallel_tool_calls", "logprobs", "top_logprobs", "user", "functions", "function_call", "unknown_field", "chat_template_kwargs"];
const completionsBase = {model: "fake", prompt: "once upon", max_tokens: 5};
const completionsFields = ["model", "prompt", "suffix", "max_tokens", "temperature", "top_p", "n", "stop", "seed", "presence_penalty",
    "frequency_penalty", "logit_bias", "logprobs", "echo", "best_of", "stream", "stream_options", "user", "unknown_field"];
const speechBase = {model: "fake-speech", input: "Hello there. Bye!", voice: "af_heart"};
const speechFields = ["model", "input", "voice", "instructions", "response_format", "speed", "stream_format", "stream", "unknown_field"];
const imagesBase = {model: "fake-sd", prompt: "a red fox", size: "32x32"};
const imagesFields = ["model", "prompt", "negative_prompt", "n", "size", "steps", "sampler", "seed", "guidance_scale", "response_format",
    "output_format", "output_compression", "quality", "background", "style", "moderation", "partial_images", "stream", "user", "unknown_field"];
const responsesBase = {model: "fake", input: "hi", max_output_tokens: 5};
const responsesFields = ["model", "input", "instructions", "max_output_tokens", "temperature", "top_p", "tools", "tool_choice", "parallel_tool_calls",
    "text", "reasoning", "metadata", "user", "store", "previous_response_id", "stream", "unknown_field"];
const messagesBase = {model: "fake", max_tokens: 5, messages: [{role: "user", content: "hi"}]};
const messagesFields = ["model", "max_tokens", "messages", "system", "stop_sequences", "temperature", "top_p", "top_k", "tools", "tool_choice",
    "thinking", "metadata", "output_config", "stream", "unknown_field"];
const tokenizeFields = ["model", "content", "prompt", "messages", "tools", "chat_template_kwargs", "add_special_tokens", "add_special", "parse_special",
    "with_pieces", "add_generation_prompt", "continue_final_message", "return_token_strs", "unknown_field"];
const decisionsBase = {model: "real", input: "hi", questions: [{type: "predicate", instructions: "Is it a greeting?"}, {type: "choice", instructions: "Which?", choices: [{value: "a"}, {value: true}]}]};
const decisionsFields = ["model", "input", "questions", "prompt_cache_key", "prompt_cache_options", "safety_identifier", "unknown_field"];
const systemOneBase = {model: "real", state: {text: "hi"}, questions: {greeting: {type: "noul", instructions: "Is it a greeting?"}, level: {type: "score", instructions: "How warm?", criteria: ["cold", "warm"]}}};
const embeddingsBase = {model: "tiny-bert", input: "hello"};
const embeddingsFields = ["model", "input", "encoding_format", "dimensions", "user", "unknown_field"];
const rerankBase = {model: "tiny-cross-encoder", query: "the quick fox", documents: ["the lazy dog", {text: "a red ball"}], top_n: 1};
const rerankFields = ["model", "query", "documents", "top_n", "return_documents", "max_tokens_per_doc", "unknown_field"];

const check = async (path: string, base: Record<string, unknown>, fields: string[], numRuns: number) => {
    await fc.assert(property(path, base, fields), {seed, numRuns});
    await expectIdle();
};

const combined = async (path: string, base: Record<string, unknown>, choices: Record<string, readonly string[]>, numRuns: number) => {
    await fc.assert(fc.asyncProperty(combinedBody(base, choices), async (mutation) => {
        const problem = await send(`POST ${path} ${JSON.stringify(base).slice(0, 60)} combined`, path, mutation);
        expect(problem, mutation.body.slice(0, 500)).toBeNull();
    }), {seed, numRuns});
    await expectIdle();
};

// Plausible values per field (JSON text), at and just past the bounds, for `combined`.
const completionsChoices = {
    prompt: ['"once upon"', '["a","b"]', "[1,2,3]", "[[1,2],[3]]", '""', '[""]', "[]", "[[]]", '"\\ud800"', "[99999999]"],
    suffix: ['"end"', '""', "null"], max_tokens: ["1", "0", "3", "null", "100000"], temperature: ["0", "2", "2.01", "null"],
    top_p: ["0", "1", "0.5"], n: ["1", "2", "3", "129"], stop: ['"\n"', '["a","b","c","d"]', '["a","b","c","d","e"]', '""', "null"],
    seed: ["0", "-1", "9007199254740993"], presence_penalty: ["-2", "2", "2.5"], frequency_penalty: ["-2", "0", "-2.1"],
    logit_bias: ['{"1":100}', '{"1":-100}', '{"2":101}', '{"x":1}', "{}"], logprobs: ["0", "5", "6", "null", "true"],
    echo: ["true", "false"], best_of: ["1", "2", "3", "20", "21"], stream: ["true", "false"],
    stream_options: ['{"include_usage":true}', '{"include_usage":false}', "null"], user: ['"u"']
} as const;
const speechChoices = {
    input: ['"One. Two! Three?"', '"x"', '" "', '"\\u0000"', '"🙂🙂"', `"${"word ".repeat(60)}"`],
    voice: ['"af_heart"', '"am_onyx"', '"alloy"', '"onyx"', '{"id":"am_onyx"}', '{"id":"nobody"}', '"nobody"'],
    instructions: ['"calm"', '""', "null"], response_format: ['"mp3"', '"opus"', '"aac"', '"flac"', '"wav"', '"pcm"'],
    speed: ["0.25", "1", "4", "0.5", "4.01"], stream_format: ['"audio"', '"sse"'], stream: ["true", "false"]
} as const;
const imagesChoices = {
    prompt: ['"a red fox"', '"a fox --ar 16:9 --seed 3 --no dogs"', '"x --ar 0:1"', '"x --v 6 --stylize 99999"', `"${"fox ".repeat(100)}"`],
    negative_prompt: ['"blurry"', '""'], n: ["1", "2", "4", "5"], size: ['"32x32"', '"48x64"', '"auto"', '"128x128"', '"136x136"', '"33x33"'],
    steps: ["1", "2", "50", "51"], sampler: ['"Euler"', '"Euler a"', '"DDIM"', '"DPM++ 2M Karras"', '"LCM"', '"nope"'],
    seed: ["0", "4294967295", "4294967296"], guidance_scale: ["0", "1", "30", "30.5"], response_format: ['"b64_json"', '"url"'],
    output_format: ['"png"', '"jpeg"', '"webp"'], output_compression: ["0", "100", "101"], quality: ['"low"', '"hd"', '"standard"', '"auto"'],
    background: ['"transparent"', '"opaque"', '"auto"'], style: ['"vivid"'], moderation: ['"low"'], partial_images: ["0", "1", "3", "4"],
    stream: ["true", "false"], user: ['"u"']
} as const;
// A MidJourney-style model takes its parameters in the prompt, plus OpenAI's output options.
const midjourneyChoices = {
    prompt: ['"a red fox"', '"a fox --ar 16:9"', '"a fox --ar 1:3 --seed 7"', '"a fox --no dogs --chaos 50 --stylize 250"', '"x --ar 0:1"',
        '"x --seed -1"', '"x --seed 99999999999"', '"x --v 6 --q 2 --weird 3000 --tile"', '"x --ar"', '"--ar 2:1"', '"x --unknownflag 3"', '"x -- --"'],
    stream: ["true", "false"], response_format: ['"b64_json"', '"url"'], output_format: ['"png"', '"jpeg"', '"webp"'],
    output_compression: ["0", "100"], partial_images: ["0", "2"], n: ["1", "2"], background: ['"transparent"', '"auto"'], user: ['"u"']
} as const;

const property = (path: string, base: Record<string, unknown>, fields: string[]) =>
    fc.asyncProperty(mutatedBody(base, fields), async (mutation) => {
        const problem = await send(`POST ${path} ${JSON.stringify(base).slice(0, 90)}`, path, mutation);
        expect(problem, `${mutation.contentType} ${mutation.body.slice(0, 500)}`).toBeNull();
    });

describe(`fuzz (${runs} cases per endpoint, seed ${seed})`, () => {
    it("POST /v1/chat/completions", async () => {
        await fc.assert(property("/v1/chat/completions", chatBase, chatFields), {seed, numRuns: runs});
    }, 600_000);

    it("POST /v1/chat/completions on a real (tiny) model", async () => {
        await fc.assert(property("/v1/chat/completions", {...chatBase, model: "real"}, chatFields), {seed, numRuns: Math.ceil(runs / 4)});
    }, 600_000);

    it("POST /v1/responses", async () => {
        await check("/v1/responses", responsesBase, responsesFields, runs);
        await check("/v1/responses", {...responsesBase, stream: true}, responsesFields, runsFor(1 / 2));
        await check("/v1/responses", {...responsesBase, model: "real", input: [{role: "user", content: "hi"}]}, responsesFields, runsFor(1 / 4));
    }, 600_000);

    it("POST /v1/messages (Anthropic's shape)", async () => {
        await check("/v1/messages", messagesBase, messagesFields, runs);
        await check("/v1/messages", {...messagesBase, stream: true}, messagesFields, runsFor(1 / 2));
        await check("/v1/messages", {...messagesBase, model: "real"}, messagesFields, runsFor(1 / 4));
        await check("/v1/messages/count_tokens", {model: "real", messages: messagesBase.messages}, ["model", "messages", "system", "tools", "tool_choice", "unknown_field"], runsFor(1 / 4));
    }, 600_000);

    it("POST /v1/tokenize and /v1/detokenize (and llama-server's /tokenize, /detokenize)", async () => {
        // 1/2 of FUZZ_RUNS in all: each case tokenizes what fast-check made of the fields.
        await check("/v1/tokenize", {model: "real", content: "Hello world", with_pieces: true}, tokenizeFields, runsFor(1 / 8));
        await check("/v1/tokenize", {model: "real", messages: messagesBase.messages}, tokenizeFields, runsFor(1 / 16));
        await check("/v1/tokenize", {model: "fake", prompt: "Hello world"}, tokenizeFields, runsFor(1 / 16));
        await check("/tokenize", {model: "real", content: "<|im_start|>hi", add_special: true, parse_special: false}, tokenizeFields, runsFor(1 / 16));
        await check("/v1/detokenize", {model: "real", tokens: [1, 3, 400]}, ["model", "tokens", "unknown_field"], runsFor(1 / 8));
        await check("/detokenize", {model: "real", tokens: [5]}, ["model", "tokens", "unknown_field"], runsFor(1 / 16));
    }, 600_000);

    it("POST /v1/decisions and /v1/systemone", async () => {
        // 1/4 of FUZZ_RUNS in all on the real engine (each case evaluates its questions), the rest on the fake one.
        await check("/v1/decisions", decisionsBase, decisionsFields, runsFor(1 / 8));
        await check("/v1/decisions", {...decisionsBase, model: "fake", input: [{role: "user", content: [{type: "input_text", text: "hi"}]}]}, decisionsFields, runsFor(1 / 4));
        await check("/v1/systemone", systemOneBase, ["model", "state", "questions", "unknown_field"], runsFor(1 / 8));
    }, 600_000);

    it("POST /v1/completions", async () => {
        await check("/v1/completions", completionsBase, completionsFields, runs);
        await check("/v1/completions", {...completionsBase, stream: true, stream_options: {include_usage: true}}, completionsFields, runsFor(1 / 2));
        await combined("/v1/completions", completionsBase, completionsChoices, runs);
    }, 600_000);

    it("POST /v1/completions on a real (tiny) model", async () => {
        await check("/v1/completions", {...completionsBase, model: "real"}, completionsFields, runsFor(1 / 4));
        await check("/v1/completions", {...completionsBase, model: "real", stream: true, logprobs: 2}, completionsFields, runsFor(1 / 8));
        await combined("/v1/completions", {...completionsBase, model: "real"}, completionsChoices, runsFor(1 / 4));
    }, 600_000);

    it("POST /v1/audio/speech", async () => {
        // Each answer is encoded audio (mp3 by default), the dearest per case of the model-free properties.
        await check("/v1/audio/speech", speechBase, speechFields, runsFor(1 / 2));
        await check("/v1/audio/speech", {...speechBase, stream_format: "sse"}, speechFields, runsFor(1 / 4));
        await check("/v1/audio/speech", {...speechBase, response_format: "pcm", stream: true}, speechFields, runsFor(1 / 4));
        await combined("/v1/audio/speech", speechBase, speechChoices, runsFor(1 / 2));
    }, 600_000);

    it("POST /v1/audio/speech on a real (tiny) Kokoro model", async () => {
        await check("/v1/audio/speech", {...speechBase, model: "tiny-kokoro", input: "Hi.", response_format: "wav"}, speechFields, runsFor(1 / 10));
        await combined("/v1/audio/speech", {...speechBase, model: "tiny-kokoro", input: "Hi."}, {...speechChoices, input: ['"Hi."', '"One. Two!"', '" "', '"🙂"']}, runsFor(1 / 10));
    }, 600_000);

    it("GET /v1/audio/voices with fuzzed query strings", async () => {
        await fc.assert(fc.asyncProperty(
            fc.array(fc.tuple(fc.constantFrom("model", "model", "voice", "", "model[]", "x"),
                fc.oneof(fc.constantFrom("fake-speech", "tiny-kokoro", "tts-1", "fake-sd", "fake", "tiny-bert", "", "nope"),
                    fc.string({unit: "binary", maxLength: 40}))), {maxLength: 3}),
            async (pairs) => {
                const query = pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join("&");
                const response = await fetch(`${server.url}/v1/audio/voices?${query}`);
                count("GET /v1/audio/voices", response.status);
                const problem = await checkAnswer(response, {field: null, body: query, contentType: ""});
                expect(problem, `?${query}`).toBeNull();
            }), {seed, numRuns: runs});
        await expectIdle();
    }, 600_000);

    it("POST /v1/images/generations", async () => {
        await check("/v1/images/generations", imagesBase, imagesFields, runs);
        await check("/v1/images/generations", {...imagesBase, stream: true, partial_images: 1}, imagesFields, runsFor(1 / 2));
        await check("/v1/images/generations", {model: "fake-mj", prompt: "a red fox --ar 3:2"}, imagesFields, runsFor(1 / 2));
        await combined("/v1/images/generations", imagesBase, imagesChoices, runs);
        await combined("/v1/images/generations", {model: "fake-mj", prompt: "a red fox"}, midjourneyChoices, runsFor(1 / 2));
    }, 600_000);

    it("POST /v1/images/generations on a real (tiny) Stable Diffusion model", async () => {
        await check("/v1/images/generations", {model: "tiny-sd", prompt: "a red fox"}, imagesFields, runsFor(1 / 20));
        await check("/v1/images/generations", {model: "tiny-mj", prompt: "a red fox --ar 2:1"}, imagesFields, runsFor(1 / 40));
        const small = {...imagesChoices, size: ['"64x64"', '"auto"', '"72x64"', '"32x32"'], steps: ["1", "2"], n: ["1", "2"]};
        await combined("/v1/images/generations", {model: "tiny-sd", prompt: "a red fox"}, small, runsFor(1 / 20));
        await combined("/v1/images/generations", {model: "tiny-mj", prompt: "a red fox"}, midjourneyChoices, runsFor(1 / 40));
    }, 600_000);

    it("POST /v1/embeddings", async () => {
        await fc.assert(property("/v1/embeddings", embeddingsBase, embeddingsFields), {seed, numRuns: runs});
    }, 600_000);

    it("POST /v1/rerank (also /rerank, /v2/rerank) on the ONNX and the GGUF reranker", async () => {
        // 1/2 of FUZZ_RUNS in all: each case runs a real (tiny) reranker.
        await fc.assert(property("/v1/rerank", rerankBase, rerankFields), {seed, numRuns: runsFor(1 / 4)});
        await fc.assert(property("/v2/rerank", {...rerankBase, model: "tiny-reranker", return_documents: true}, rerankFields), {seed, numRuns: runsFor(1 / 8)});
        await fc.assert(property("/rerank", {...rerankBase, documents: ["a", "b", "c"]}, rerankFields), {seed, numRuns: runsFor(1 / 8)});
    }, 600_000);

    it("GET /v1/models/{id} and odd methods and paths", async () => {
        await fc.assert(fc.asyncProperty(
            fc.string({unit: "binary", maxLength: 60}), fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"),
            fc.constantFrom("/v1/models/", "/v1/", "/v1/chat/completions/", "/", "/health/", "/metrics/"),
            async (tail, method, prefix) => {
                const response = await fetch(`${server.url}${prefix}${encodeURIComponent(tail)}`, {method});
                const text = await response.text();
                expect(response.status, `${method} ${prefix}${tail}: ${text.slice(0, 200)}`).toBeLessThan(500);
                if (response.status >= 400 && method !== "HEAD")
                    expect(JSON.parse(text).error.message).toBeTypeOf("string");
            }), {seed, numRuns: runs});
    }, 600_000);

    it("a body over the limit is a 413, and the server is healthy with nothing busy afterwards", async () => {
        const huge = await fetch(`${server.url}/v1/chat/completions`, {method: "POST", headers: {"Content-Type": "application/json"},
            body: JSON.stringify({...chatBase, messages: [{role: "user", content: "x".repeat(11_000_000)}]})});
        expect(huge.status).toBe(413);
        const health = await (await fetch(`${server.url}/health`)).json() as {status: string, models: Record<string, unknown>};
        expect(health.status).toBe("ok");
        for (const [model, load] of Object.entries(health.models as Record<string, {busy: number, waiting: number}>))
            expect(load, model).toMatchObject({busy: 0, waiting: 0});
    });
});
