import { afterEach, describe, expect, it } from "vitest";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { eventually } from "../support/eventually.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

// A client that closes the connection is not a server error: no ERROR line, no 5xx in /metrics;
// its request is logged and counted as 499 (nginx's "client closed request").
const models = [{id: "fake", task: "chat", path: tinyChatModelPath}];
let server: TestServer | undefined;
afterEach(async () => {
    await server?.stop();
    server = undefined;
});

async function requestsByStatus(url: string) {
    const families = parsePrometheusTextFormat(await (await fetch(`${url}/metrics`)).text()) as {name: string, metrics: {labels: Record<string, string>, value: string}[]}[];
    const requests = families.find((family) => family.name === "los_requests_total")?.metrics ?? [];
    return requests.filter((metric) => metric.labels.endpoint === "/v1/chat/completions").map((metric) => `${metric.labels.status}:${metric.value}`);
}

describe("client disconnects", () => {
    for (const stream of [false, true]) {
        it(`before the response ends (stream: ${stream}) are logged at info as 499, never as a server error`, async () => {
            // The job writes its first piece, then waits for its request's signal: it goes on only once the server saw the client go.
            let started!: () => void;
            const firstWritten = new Promise<void>((resolve) => started = resolve);
            const engine = new FakeChatEngine("fake", {pieces: ["first", " second"], beforePiece: async (index, signal) => {
                if (index === 0)
                    return;
                started();
                await new Promise((resolve) => signal.aborted ? resolve(null) : signal.addEventListener("abort", resolve, {once: true}));
            }});
            const logLines: string[] = [];
            server = await startTestServer({models, factories: {chat: async () => engine}, config: {logLevel: "info"}, logLines});
            const controller = new AbortController();
            const request = server.post("/v1/chat/completions", {model: "fake", messages: [{role: "user", content: "hi"}], stream}, {signal: controller.signal})
                .then(async (response) => response.text());
            await firstWritten;
            controller.abort();
            await expect(request).rejects.toThrow();
            expect(await eventually(() => logLines.some((line) => line.includes("POST /v1/chat/completions")))).toBe(true);
            const line = logLines.find((candidate) => candidate.includes("POST /v1/chat/completions"))!;
            expect(line).toContain(" INFO ");
            expect(line).toContain("status=499");
            expect(line).toContain("disconnected=true");
            expect(logLines.filter((candidate) => candidate.includes(" ERROR "))).toEqual([]);
            expect(await requestsByStatus(server.url)).toEqual(["499:1"]);
        });
    }
});
