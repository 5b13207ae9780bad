import path from "node:path";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import type { ChatSettings } from "../../src/capabilities/chat/chatManifest.js";
import { speculativeOptions } from "../../src/capabilities/chat/speculativeOptions.js";
import { defaultConfig } from "../../src/config.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";

// A model that repeats any passage of its own output it is shown (attention off: the next token depends on the
// current one only), so prompt lookup's drafts are accepted for real over HTTP.
const copierPath = path.join(testModelsDir, "spec-copier-e2e.gguf");

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
            // (no clock: a 64-wide model's step is so short that the default costs would allow no draft at all).
            chat: async (entry) => LlamaChatEngine.load(llama, {
                id: entry.id, modelPath: entry.path, contextSize: 1024, threads: 1, parallel: 2, queueSize: 8, promptCache: "off",
                speculative: {...speculativeOptions(entry.settings as ChatSettings, defaultConfig), timing: {fixedMs: 0, perTokenMs: 0, perTokenSteps: 0}}
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
