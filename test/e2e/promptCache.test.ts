import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath, tinyToolsModelPath } from "../support/testModels.js";

const weatherParams = {type: "object", properties: {city: {type: "string", maxLength: 12}}, required: ["city"], additionalProperties: false};
const tools = [{type: "function" as const, function: {name: "get_weather", description: "Weather of a city", parameters: weatherParams}}];
const first = [{role: "system" as const, content: "Be brief and kind."}, {role: "user" as const, content: "Hello there, how are you today?"}];
const followUp = [...first, {role: "assistant" as const, content: "Fine, thanks."}, {role: "user" as const, content: "And tomorrow?"}];

describe("prompt cache over HTTP: usage.prompt_tokens_details.cached_tokens and /health", () => {
    let server: TestServer;
    let uncached: TestServer;
    const models = [
        {id: "tiny-chat", task: "chat", path: tinyChatModelPath, contextSize: 256, parallel: 2},
        {id: "tiny-tools", task: "chat", path: tinyToolsModelPath, contextSize: 2048, parallel: 2}
    ];
    beforeAll(async () => {
        server = await startTestServer({models});
        uncached = await startTestServer({models: models.slice(0, 1), config: {promptCache: "off"}});
    });
    afterAll(async () => {
        await server?.stop();
        await uncached?.stop();
    });

    it("a follow-up turn reuses the whole previous prompt; the same request again reuses all but its last token", async () => {
        const one = await server.client.chat.completions.create({model: "tiny-chat", messages: first, max_tokens: 4, seed: 1});
        const two = await server.client.chat.completions.create({model: "tiny-chat", messages: followUp, max_tokens: 4, seed: 1});
        const again = await server.client.chat.completions.create({model: "tiny-chat", messages: followUp, max_tokens: 4, seed: 1});
        expect(one.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
        expect(two.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThanOrEqual(one.usage!.prompt_tokens);
        expect(two.usage!.prompt_tokens_details!.cached_tokens).toBeLessThan(two.usage!.prompt_tokens);
        expect(again.usage!.prompt_tokens_details!.cached_tokens).toBe(again.usage!.prompt_tokens - 1);
    });

    it("streamed, with include_usage: the usage chunk carries cached_tokens", async () => {
        const body = {model: "tiny-chat", messages: followUp, max_tokens: 3, seed: 2, stream: true, stream_options: {include_usage: true}};
        const {events} = await readSse(await server.post("/v1/chat/completions", body));
        const usage = events.filter((event) => event.data !== "[DONE]").map((event) => JSON.parse(event.data)).at(-1).usage;
        expect(usage.prompt_tokens_details.cached_tokens).toBe(usage.prompt_tokens - 1);
    });

    it("n = 2 with a JSON grammar: both choices reuse the prompt on their own sequences", async () => {
        const messages = [{role: "system", content: "Answer in JSON."}, {role: "user", content: "Hello"}];
        const body = {model: "tiny-chat", messages, max_tokens: 6, n: 2, seed: 3, response_format: {type: "json_object"}};
        expect((await server.post("/v1/chat/completions", body)).status).toBe(200);
        const second = await jsonOf(await server.post("/v1/chat/completions", body));
        expect(second.choices).toHaveLength(2);
        expect(second.usage.prompt_tokens_details.cached_tokens).toBe(second.usage.prompt_tokens - 1);
    });

    it("forced tool calls (grammar) reuse the prompt, tools included", async () => {
        const request = {model: "tiny-tools", messages: first, tools, tool_choice: "required" as const, max_tokens: 40, seed: 4};
        await server.client.chat.completions.create(request);
        const second = await server.client.chat.completions.create(request);
        expect(second.usage!.prompt_tokens_details!.cached_tokens).toBe(second.usage!.prompt_tokens - 1);
        expect(second.choices[0].message.tool_calls?.[0]).toMatchObject({type: "function", function: {name: "get_weather"}});
    });

    it("/health reports hits, cached tokens, the binary and flash attention per chat model", async () => {
        const health: any = await (await fetch(`${server.url}/health`)).json();
        const details = health.models["tiny-chat"].details;
        expect(details.promptCache.mode).toBe("on");
        expect(details.promptCache.hits).toBeGreaterThanOrEqual(4);
        expect(details.promptCache.lookups).toBeGreaterThan(details.promptCache.hits);
        expect(details.promptCache.cachedTokens).toBeGreaterThan(0);
        // The test servers run GGUF models on the CPU (gpu: "off"), whatever GPU stack the machine has.
        expect(details.binary).toMatch(/^(prebuilt|native) cpu/);
        expect(details.gpu).toEqual({backend: "cpu", devices: [], vramBytes: 0, offloadedLayers: 0});
        expect(details.flashAttention).toBe(true);
    });

    it("/metrics counts the same lookups, hits and tokens per model (an operator's view of balancer affinity)", async () => {
        const {promptCache} = (await jsonOf(await fetch(`${server.url}/health`))).models["tiny-chat"].details;
        const text = await (await fetch(`${server.url}/metrics`)).text();
        const sample = (name: string) => Number(new RegExp(`^${name}\\{model="tiny-chat"\\} (\\d+)$`, "m").exec(text)?.[1]);
        expect(promptCache.hits).toBeGreaterThan(0);
        expect({
            lookups: sample("los_prompt_cache_lookups_total"), hits: sample("los_prompt_cache_hits_total"),
            promptTokens: sample("los_prompt_cache_prompt_tokens_total"), cachedTokens: sample("los_prompt_cache_cached_tokens_total")
        }).toEqual({lookups: promptCache.lookups, hits: promptCache.hits, promptTokens: promptCache.promptTokens, cachedTokens: promptCache.cachedTokens});
        expect(text).toMatch(/^# TYPE los_prompt_cache_hits_total counter$/m);
    });

    it("PROMPT_CACHE=off: nothing is reused, and /health says so", async () => {
        const request = {model: "tiny-chat", messages: followUp, max_tokens: 3, seed: 5};
        await uncached.client.chat.completions.create(request);
        const again = await uncached.client.chat.completions.create(request);
        expect(again.usage!.prompt_tokens_details!.cached_tokens).toBe(0);
        const health: any = await (await fetch(`${uncached.url}/health`)).json();
        expect(health.models["tiny-chat"].details.promptCache).toMatchObject({mode: "off", hits: 0});
    });
});
