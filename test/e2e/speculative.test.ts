import { once } from "node:events";
import path from "node:path";
import { Worker } from "node:worker_threads";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import type { ChatSettings } from "../../src/capabilities/chat/chatManifest.js";
import { speculativeOptions } from "../../src/capabilities/chat/speculativeOptions.js";
import { defaultConfig } from "../../src/config.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { storiesModelPath, testModelsDir, tinyToolsModelPath } from "../support/testModels.js";
import { eventually } from "../support/eventually.js";

// A model that repeats any passage of its own output it is shown (attention off: the next token depends on the
// current one only), so prompt lookup's drafts are accepted for real over HTTP.
const copierPath = path.join(testModelsDir, "spec-copier-e2e.gguf");
// The same kind of model, 256 wide and 15 MB: large enough that its own draft cost (from its size) lets it draft.
const wideCopierPath = path.join(testModelsDir, "spec-copier-wide.gguf");

describe("speculative decoding over HTTP: same text streamed or not, acceptance in /health and /metrics", () => {
    let server: TestServer;
    let quoting: string;
    beforeAll(async () => {
        await makeTestLlamaGguf(copierPath, {
            nEmbd: 64, nLayers: 2, nHeads: 4, nKvHeads: 2, nFf: 128, contextLength: 1024, chatTemplate: null, seed: 31,
            residualGain: (_layer, part) => part === "attention" ? 0 : 1
        });
        const llama = await loadLlamaRuntime({gpu: "off"});
        server = await startTestServer({models: [
            {id: "copier", task: "chat", path: copierPath, contextSize: 1024},
            {id: "copier-plain", task: "chat", path: copierPath, contextSize: 1024, speculative: "off"}
        ], config: {promptCache: "off"}, factories: {
            // The chat capability's engine with the manifest's speculative settings, drafts sized by acceptance alone
            // (a free draft: a 64-wide model's step is so short that its own cost would allow no draft at all).
            chat: async (entry) => LlamaChatEngine.load(llama, {
                id: entry.id, modelPath: entry.path, contextSize: 1024, threads: 1, parallel: 2, queueSize: 8, promptCache: "off",
                speculative: {...speculativeOptions(entry.settings as ChatSettings, defaultConfig), cost: {fixed: 0, perToken: 0}}
            })
        }});
        const source = await jsonOf(await server.post("/v1/completions", {model: "copier-plain", prompt: "Once upon a time", max_tokens: 60, temperature: 0}));
        quoting = `Rewrite this story.\n\nOnce upon a time${source.choices[0].text}\n\nRewritten:\n\nOnce upon a time`;
    }, 60_000);
    afterAll(async () => {
        await server?.stop();
    });

    it("the completion equals plain decoding's, streamed and not, and drafts were accepted", async () => {
        const body = {prompt: quoting, max_tokens: 60, temperature: 0};
        const plain = await jsonOf(await server.post("/v1/completions", {...body, model: "copier-plain"}));
        const fast = await jsonOf(await server.post("/v1/completions", {...body, model: "copier"}));
        expect(fast.choices[0].text).toBe(plain.choices[0].text);
        expect(fast.usage.completion_tokens).toBe(plain.usage.completion_tokens);
        const {events} = await readSse(await server.post("/v1/completions", {...body, model: "copier", stream: true}));
        const streamed = events.filter((event) => event.data !== "[DONE]").map((event) => JSON.parse(event.data).choices[0]?.text ?? "").join("");
        expect(streamed).toBe(plain.choices[0].text);

        const health = await jsonOf(await fetch(`${server.url}/health`));
        const stats = health.models.copier.details.speculative;
        expect(stats.mode).toBe("lookup");
        expect(stats.acceptedTokens).toBeGreaterThan(30);
        expect(stats.draftedTokens).toBeGreaterThanOrEqual(stats.acceptedTokens);
        expect(stats.acceptanceRate).toBeCloseTo(stats.acceptedTokens / stats.draftedTokens, 10);
        // Drafts accepted several tokens at a time (node-llama-cpp as patched: unpatched, at most one per step).
        expect(stats.meanAcceptedLength).toBeGreaterThan(2);
        expect(health.models["copier-plain"].details.speculative).toMatchObject({mode: "off", draftedTokens: 0, acceptanceRate: null});

        const metrics = parsePrometheusTextFormat(await (await fetch(`${server.url}/metrics`)).text());
        const sample = (name: string, model: string) => Number(metrics.find((family) => family.name === name)!.metrics.find((metric) => metric.labels?.model === model)!.value);
        expect(sample("los_speculative_accepted_tokens_total", "copier")).toBe(stats.acceptedTokens);
        expect(sample("los_speculative_drafted_tokens_total", "copier")).toBe(stats.draftedTokens);
        expect(sample("los_speculative_drafted_tokens_total", "copier-plain")).toBe(0);
    }, 60_000);
});

/** A response's JSON without what differs by design between two runs: ids (the response's, tool calls') and `created`. */
function comparable(text: string): string {
    return JSON.stringify(JSON.parse(text), (key, value) => key === "id" || key === "created" ? undefined : value);
}

type Completion = {choices: {index: number, text: string, finish_reason: string, logprobs: {tokens: string[], token_logprobs: number[]}}[], usage: unknown};

describe("the same seeded request gives the same bytes while other work competes for the CPU", () => {
    let server: TestServer;
    let quoting: string;
    const forcedTool = {
        type: "function" as const,
        function: {name: "get_weather", description: "Weather of a city", parameters: {
            type: "object", properties: {city: {type: "string", maxLength: 12}, unit: {enum: ["c", "f"]}}, required: ["city", "unit"], additionalProperties: false
        }}
    };
    beforeAll(async () => {
        await makeTestLlamaGguf(wideCopierPath, {
            nEmbd: 256, nLayers: 4, nHeads: 8, nKvHeads: 4, nFf: 768, contextLength: 1024, chatTemplate: null, seed: 31, weightStorage: "f32",
            residualGain: (_layer, part) => part === "attention" ? 0 : 1
        });
        // The server's own chat engine and defaults: prompt lookup on, each model's draft cost from its size.
        server = await startTestServer({models: [
            {id: "copier", task: "chat", path: wideCopierPath, contextSize: 1024, threads: 1, parallel: 2},
            {id: "stories", task: "chat", path: storiesModelPath, contextSize: 256, threads: 1, parallel: 4},
            {id: "tiny-tools", task: "chat", path: tinyToolsModelPath, contextSize: 2048, threads: 1, parallel: 2},
            {id: "competitor", task: "chat", path: storiesModelPath, contextSize: 256, threads: 1, parallel: 1, speculative: "off"}
        ], config: {promptCache: "off"}});
        const source = await jsonOf(await server.post("/v1/completions", {model: "copier", prompt: "Once upon a time", max_tokens: 60, temperature: 0}));
        quoting = `Rewrite this story.\n\nOnce upon a time${source.choices[0].text}\n\nRewritten:\n\nOnce upon a time`;
    }, 60_000);
    afterAll(async () => {
        await server?.stop();
    });

    /** The answer to `body` at `route`, plain and streamed (the stream's events one per line), as comparable bytes. */
    async function bothWays(route: string, body: Record<string, unknown>): Promise<string[]> {
        const plain = comparable(await (await server.post(route, body)).text());
        const {events} = await readSse(await server.post(route, {...body, stream: true, stream_options: {include_usage: true}}));
        return [plain, events.map((event) => event.data === "[DONE]" ? event.data : comparable(event.data)).join("\n")];
    }

    /** Seeded sampled requests with one choice each: their bytes. And the four choices of a request that has them. */
    async function seeded() {
        const single = [
            // Prompt lookup drafts here, at the model's own cost: what it drafts decides the random numbers drawn.
            ...await bothWays("/v1/completions", {model: "copier", prompt: quoting, max_tokens: 48, temperature: 1, seed: 7, logprobs: 2}),
            ...await bothWays("/v1/completions", {model: "stories", prompt: "Once upon a time", max_tokens: 40, temperature: 0.9, seed: 77, logprobs: 2, echo: true}),
            ...await bothWays("/v1/chat/completions", {
                model: "tiny-tools", seed: 5, temperature: 1, max_tokens: 1000, tools: [forcedTool], tool_choice: "required", messages: [{role: "user", content: "Weather?"}]
            })
        ];
        const several = await jsonOf(await server.post("/v1/completions", {
            model: "stories", prompt: ["Once upon a time", "The cat"], n: 2, temperature: 0.9, seed: 77, max_tokens: 20, logprobs: 2
        })) as Completion;
        return {single, several};
    }

    it("with generations of another model in the same server and a busy thread beside it", async () => {
        const idle = await seeded();
        const stats = (await jsonOf(await fetch(`${server.url}/health`))).models.copier.details.speculative;
        // Drafts were made and accepted at the model's own cost: the speculative path is what is compared.
        expect(stats.acceptedTokens).toBeGreaterThan(0);

        // A thread that keeps a core busy, and generations of another model in the same process, both running
        // before the seeded requests start and until they end.
        const busy = new Worker("require('node:worker_threads').parentPort.postMessage('busy'); for (;;) {}", {eval: true});
        let competing = true;
        const competitor = (async () => {
            while (competing)
                await server.post("/v1/completions", {model: "competitor", prompt: "Once upon a time", max_tokens: 200, temperature: 1, logit_bias: {"2": -100}});
        })();
        try {
            await once(busy, "message");
            const load = async () => (await jsonOf(await fetch(`${server.url}/health`))).models.competitor.busy;
            expect(await eventually(async () => await load() === 1)).toBe(true);
            const loaded = await seeded();
            // One choice: the same bytes, plain and streamed.
            expect(loaded.single).toEqual(idle.single);
            // Several choices of one request share the model's batches in shapes that depend on when each one's prompt
            // was in (as two requests do): the same tokens, texts and usage; logprobs equal to float rounding (as
            // completions.test.ts compares a streamed and a plain answer: to 3 decimals).
            expect(loaded.several.usage).toEqual(idle.several.usage);
            loaded.several.choices.forEach((choice, index) => {
                const before = idle.several.choices[index];
                expect({index: choice.index, text: choice.text, finish: choice.finish_reason, tokens: choice.logprobs.tokens})
                    .toEqual({index: before.index, text: before.text, finish: before.finish_reason, tokens: before.logprobs.tokens});
                choice.logprobs.token_logprobs.forEach((logprob, position) => expect(logprob).toBeCloseTo(before.logprobs.token_logprobs[position], 3));
            });
        } finally {
            competing = false;
            await competitor;
            await busy.terminate();
        }
    }, 120_000);
});
