import parsePrometheusTextFormat, { type PrometheusFamily } from "parse-prometheus-text-format";
import { afterEach, describe, expect, it } from "vitest";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { gatedFakeChatEngine } from "../support/gatedFakeChatEngine.js";
import { tinyChatModelPath } from "../support/testModels.js";
import type { Config } from "../../src/config.js";

const models = [{id: "gated", task: "chat", path: tinyChatModelPath, aliases: ["gpt-4o-mini"]}];
let server: TestServer | undefined;
afterEach(async () => {
    await server?.stop();
    server = undefined;
});

/** The parsed families (the parser throws on any malformed line) and the raw text. */
async function scrape(url: string, headers: Record<string, string> = {}) {
    const response = await fetch(`${url}/metrics`, {headers});
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    return Object.assign(parsePrometheusTextFormat(text), {text});
}

/**
 * A labelled histogram's `_count`: the parser keeps histogram labels only for unlabelled
 * histograms, so this one sample line is read from the (parser-validated) text.
 */
function histogramCount(text: string, name: string, labels: string) {
    const line = text.split("\n").find((candidate) => candidate.startsWith(`${name}_count{${labels}}`));
    return line == null ? undefined : Number(line.split(" ").at(-1));
}

function family(families: PrometheusFamily[], name: string) {
    const found = families.find((candidate) => candidate.name === name);
    expect(found, name).toBeDefined();
    return found!;
}

function valueOf(families: PrometheusFamily[], name: string, labels: Record<string, string>) {
    const sample = family(families, name).metrics.find((metric) => Object.entries(labels).every(([key, value]) => metric.labels?.[key] === value));
    return sample == null ? undefined : Number(sample.value ?? sample.count);
}

describe("GET /metrics", () => {
    const start = async (config: Partial<Config> = {}, apiKey?: string) => {
        const gated = gatedFakeChatEngine("gated");
        const engine = gated.engine;
        server = await startTestServer({models, config, apiKey, factories: {chat: async () => engine}});
        return gated;
    };

    it("counts requests by endpoint, model and status, with latency, tokens, time to first token, busy sequences and memory", async () => {
        const engine = await start();
        const stream = await server!.post("/v1/chat/completions", {model: "gpt-4o-mini", messages: [{role: "user", content: "hi"}], stream: true});
        await engine.started();

        // Mid-generation: one busy sequence.
        const during = await scrape(server!.url);
        expect(valueOf(during, "los_model_busy", {model: "gated"})).toBe(1);
        expect(valueOf(during, "los_model_parallel", {model: "gated"})).toBe(2);
        expect(valueOf(during, "los_model_queue_depth", {model: "gated"})).toBe(0);

        engine.release();
        await readSse(stream);
        expect((await server!.post("/v1/chat/completions", {model: "gpt-4o-mini", messages: "bad"})).status).toBe(400);
        expect((await fetch(`${server!.url}/v1/nothing/${Math.random()}`)).status).toBe(404);
        await jsonOf(await fetch(`${server!.url}/v1/models`));

        const after = await scrape(server!.url);
        const chat = {endpoint: "/v1/chat/completions"};
        expect(valueOf(after, "los_requests_total", {...chat, model: "gated", status: "200"})).toBe(1);
        // A request refused before a model was resolved has no model.
        expect(valueOf(after, "los_requests_total", {...chat, model: "", status: "400"})).toBe(1);
        expect(valueOf(after, "los_requests_total", {endpoint: "other", status: "404"})).toBe(1);
        expect(valueOf(after, "los_requests_total", {endpoint: "/v1/models", status: "200"})).toBe(1);
        expect(valueOf(after, "los_tokens_total", {...chat, model: "gated", direction: "prompt"})).toBe(3);
        expect(valueOf(after, "los_tokens_total", {...chat, model: "gated", direction: "completion"})).toBe(2);
        expect(family(after, "los_request_duration_seconds").type).toBe("HISTOGRAM");
        expect(family(after, "los_time_to_first_token_seconds").type).toBe("HISTOGRAM");
        const labels = 'endpoint="/v1/chat/completions",model="gated"';
        expect(histogramCount(after.text, "los_request_duration_seconds", labels)).toBe(1);
        expect(after.text).toContain(`los_request_duration_seconds_bucket{le="+Inf",${labels}} 1`);
        expect(histogramCount(after.text, "los_time_to_first_token_seconds", labels)).toBe(1);
        expect(valueOf(after, "los_model_busy", {model: "gated"})).toBe(0);
        expect(valueOf(after, "los_model_load_seconds", {model: "gated"})).toBeGreaterThanOrEqual(0);
        expect(Number(family(after, "process_resident_memory_bytes").metrics[0].value)).toBeGreaterThan(10_000_000);
        expect(family(after, "process_open_fds").metrics[0].value).toBeDefined();
    });

    it("a streamed legacy completion observes its time to first token too, as every streamed chat-family answer does", async () => {
        const engine = await start();
        engine.release();
        const labels = (endpoint: string) => `endpoint="${endpoint}",model="gated"`;
        for (const [path, body] of [
            ["/v1/completions", {model: "gated", prompt: "hi", stream: true}],
            ["/v1/messages", {model: "gated", max_tokens: 5, messages: [{role: "user", content: "hi"}], stream: true}],
            ["/v1/responses", {model: "gated", input: "hi", stream: true}]
        ] as const) {
            const response = await server!.post(path, body);
            expect(response.status, path).toBe(200);
            await readSse(response);
        }
        const after = await scrape(server!.url);
        for (const endpoint of ["/v1/completions", "/v1/messages", "/v1/responses"])
            expect(histogramCount(after.text, "los_time_to_first_token_seconds", labels(endpoint)), endpoint).toBe(1);
    });

    it("is behind the API keys unless --metrics-public", async () => {
        await start({apiKeys: ["sk-test"]});
        expect((await fetch(`${server!.url}/metrics`)).status).toBe(401);
        await scrape(server!.url, {Authorization: "Bearer sk-test"});
        await server!.stop();
        await start({apiKeys: ["sk-test"], metricsPublic: true});
        await scrape(server!.url);
    });
});
