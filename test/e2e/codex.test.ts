import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentPrograms, installAgentProgram } from "../support/agentPrograms.js";
import { makeTestLlamaGguf, toolCallVocab, toolsChatTemplate } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startRecordingProxy, startRefusingProxy, type RecordingProxy, type RefusingProxy } from "../support/recordingProxy.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";

/**
 * OpenAI's Codex CLI, unchanged (`codex exec`), against the server's Responses API on loopback, offline, with a
 * generated model: a tool-calling template and a context big enough for Codex's instructions and tools (~37k tokens of
 * this tokenizer), which ends its turn at once (Codex sends no token limit; random weights would write until the context
 * is full). Codex's requests go through a recording proxy on loopback (each body and status), and any attempt to reach
 * anything else goes to a refusing proxy that counts it (HTTPS_PROXY/HTTP_PROXY/ALL_PROXY, which Codex follows).
 */
const codex = await installAgentProgram(agentPrograms.codex);
if ("skip" in codex)
    console.warn(`SKIPPING test/e2e/codex.test.ts: ${codex.skip}`);

/** The model Codex 0.171.0 asks for when none is configured (its default-model request shape sends `additional_tools`). */
const codexDefaultModel = "gpt-6.2-sol";
const key = "sk-codex-test";
const modelPath = path.join(testModelsDir, "tiny-codex.gguf");
/** The same model with gpt-oss's real template and its special tokens (harmony: tools rendered as a TypeScript namespace). */
const harmonyModelPath = path.join(testModelsDir, "tiny-codex-gpt-oss.gguf");

let server: TestServer;
let root: string;
let recorder: RecordingProxy;
let refuser: RefusingProxy;
const logLines: string[] = [];

/** The requests Codex sent through the recording proxy, bodies parsed, with the status each got. */
const recorded = () => recorder.exchanges.map((exchange) => ({...exchange, body: exchange.body === "" ? null : JSON.parse(exchange.body) as Record<string, unknown>}));

/** Runs `codex exec` to its end in the test's own home; its exit code and output. */
function runCodex(bin: string, args: string[]): Promise<{code: number | null, stdout: string, stderr: string}> {
    const proxy = refuser.url;
    const work = path.join(root, "work");
    return new Promise((resolve, reject) => {
        const child = spawn(bin, ["exec", "--strict-config", "--ephemeral", "--skip-git-repo-check", "--color", "never", ...args, "Say hello."], {
            cwd: work, stdio: ["ignore", "pipe", "pipe"],
            env: {
                PATH: process.env.PATH, HOME: root, CODEX_HOME: path.join(root, "codex-home"), LOCAL_OPENAI_SERVER_KEY: key,
                HTTPS_PROXY: proxy, HTTP_PROXY: proxy, ALL_PROXY: proxy, NO_PROXY: "127.0.0.1,localhost"
            }
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk) => stdout += chunk);
        child.stderr.on("data", (chunk) => stderr += chunk);
        child.on("error", reject);
        child.on("close", (code) => resolve({code, stdout, stderr}));
    });
}

describe.skipIf("skip" in codex)("Codex CLI 0.171.0 (codex exec, wire_api = \"responses\") against the server", () => {
    beforeAll(async () => {
        await makeTestLlamaGguf(modelPath, {seed: 1, chatTemplate: toolsChatTemplate, extraVocab: toolCallVocab, endsTurn: "at once",
            nEmbd: 16, nLayers: 1, nHeads: 1, nKvHeads: 1, nFf: 32, contextLength: 40960});
        await makeTestLlamaGguf(harmonyModelPath, {seed: 2, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "openai-gpt-oss-120b.jinja"), "utf8"),
            userDefinedVocab: ["<|start|>", "<|channel|>", "<|message|>", "<|constrain|>"], controlVocab: ["<|end|>", "<|return|>", "<|call|>", "<|endoftext|>"],
            endsTurn: "at once", nEmbd: 16, nLayers: 1, nHeads: 1, nKvHeads: 1, nFf: 32, contextLength: 40960});
        server = await startTestServer({
            models: [{id: "tiny-codex", task: "chat", path: modelPath, contextSize: 40960, parallel: 1, threads: 1, aliases: [codexDefaultModel]},
                {id: "tiny-codex-gpt-oss", task: "chat", path: harmonyModelPath, contextSize: 40960, parallel: 1, threads: 1}],
            config: {apiKeys: [key], logLevel: "info"}, apiKey: key, logLines
        });
        root = fs.mkdtempSync(path.join(os.tmpdir(), "codex-e2e-"));
        fs.mkdirSync(path.join(root, "work"));
        fs.mkdirSync(path.join(root, "codex-home"));
        recorder = await startRecordingProxy(server.url);
        refuser = await startRefusingProxy();
        fs.writeFileSync(path.join(root, "codex-home", "config.toml"), [
            `model_provider = "local"`,
            `approval_policy = "never"`,
            `sandbox_mode = "read-only"`,
            `check_for_update_on_startup = false`,
            ``,
            // Codex's plugin marketplace sync (github.com, chatgpt.com), analytics and telemetry (ab.chatgpt.com): off.
            `[features]`, `plugins = false`, ``,
            `[analytics]`, `enabled = false`, ``,
            `[feedback]`, `enabled = false`, ``,
            `[otel]`, `exporter = "none"`, `metrics_exporter = "none"`, `trace_exporter = "none"`, ``,
            `[model_providers.local]`,
            `name = "local-openai-server"`,
            `base_url = "${recorder.url}/v1"`,
            `env_key = "LOCAL_OPENAI_SERVER_KEY"`,
            `wire_api = "responses"`,
            ``
        ].join("\n"));
    }, 120_000);

    afterAll(async () => {
        await server?.stop();
        await recorder?.close();
        await refuser?.close();
        if (root != null)
            fs.rmSync(root, {recursive: true, force: true});
        fs.rmSync(modelPath, {force: true});
        fs.rmSync(harmonyModelPath, {force: true});
    });

    const bin = "bin" in codex ? codex.bin : "";

    it("with a named model: tools with a namespace and web_search; exit 0, only 2xx answers, nothing but loopback reached", async () => {
        recorder.exchanges.length = 0;
        logLines.length = 0;
        const result = await runCodex(bin, ["--model", "tiny-codex"]);
        expect(result.code, result.stderr).toBe(0);
        expect(recorded().length).toBeGreaterThan(0);
        expect(recorded().map((request) => request.status).filter((status) => status < 200 || status > 299)).toEqual([]);
        const first = recorded().find((request) => request.method === "POST" && request.url === "/v1/responses")!;
        expect(first.body).toMatchObject({model: "tiny-codex", stream: true, store: false, include: ["reasoning.encrypted_content"], prompt_cache_key: expect.any(String)});
        const tools = first.body!.tools as {type: string, external_web_access?: boolean}[];
        expect(tools.some((tool) => tool.type === "function")).toBe(true);
        expect(tools.some((tool) => tool.type === "namespace")).toBe(true);
        expect(tools).toContainEqual({type: "web_search", external_web_access: false});
        // web_search was left out of the model's tools, with a warning.
        expect(logLines.some((line) => line.includes(" WARN ") && line.includes("Built-in tools left out"))).toBe(true);
        expect(refuser.attempts).toEqual([]);
    }, 180_000);

    it("with a gpt-oss model (its real template renders Codex's tools): exit 0, only 2xx answers", async () => {
        recorder.exchanges.length = 0;
        logLines.length = 0;
        const result = await runCodex(bin, ["--model", "tiny-codex-gpt-oss"]);
        expect(result.code, result.stderr).toBe(0);
        const posts = recorded().filter((request) => request.method === "POST" && request.url === "/v1/responses");
        expect(posts.length).toBeGreaterThan(0);
        expect(recorded().map((request) => request.status).filter((status) => status < 200 || status > 299)).toEqual([]);
        // Codex's tools reached the template (one has a property called `items`, which failed it: patches/@huggingface+jinja+0.5.11.patch).
        expect((posts[0].body!.tools as unknown[]).length).toBeGreaterThan(5);
        expect(logLines.some((line) => line.includes(" ERROR "))).toBe(false);
        expect(refuser.attempts).toEqual([]);
    }, 180_000);

    it("with its default model: the tools as an additional_tools item (namespaces, a custom tool), reasoning.context, text.verbosity", async () => {
        recorder.exchanges.length = 0;
        const result = await runCodex(bin, []);
        expect(result.code, result.stderr).toBe(0);
        expect(recorded().length).toBeGreaterThan(0);
        expect(recorded().map((request) => request.status).filter((status) => status < 200 || status > 299)).toEqual([]);
        const first = recorded().find((request) => request.method === "POST" && request.url === "/v1/responses")!;
        expect(first.body).toMatchObject({model: codexDefaultModel, stream: true, store: false, include: ["reasoning.encrypted_content"],
            reasoning: {context: expect.any(String)}, text: {verbosity: expect.any(String)}, client_metadata: expect.any(Object)});
        const input = first.body!.input as {type?: string, tools?: {type: string, tools?: {type: string}[]}[]}[];
        const additional = input.find((item) => item.type === "additional_tools")!;
        expect(additional.tools!.every((tool) => tool.type === "namespace")).toBe(true);
        expect(additional.tools!.flatMap((tool) => tool.tools!.map((inner) => inner.type))).toEqual(expect.arrayContaining(["function", "custom"]));
        expect(refuser.attempts).toEqual([]);
    }, 180_000);
});
