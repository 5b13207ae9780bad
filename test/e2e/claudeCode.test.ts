import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentPrograms, installAgentProgram } from "../support/agentPrograms.js";
import { makeTestLlamaGguf, scriptThrough, toolCallVocab, toolsChatTemplate, type TestLlamaGgufOptions } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startRecordingProxy, startRefusingProxy, type RecordedExchange, type RecordingProxy, type RefusingProxy } from "../support/recordingProxy.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";

// Claude Code (@anthropic-ai/claude-code, unchanged, installed from npm on the first run into test/.agents/) against
// the server's Messages API on loopback, offline: `claude -p` in both output formats, and a wrong key. The model is
// generated: random weights with the Qwen2.5 tool-calling template, made to end its turns after a token (`endsTurn`),
// so its answers are garbage but complete. What is checked is what a user would see: the program exits 0 with its
// JSON result, the server answered every request with a 2xx (its own log says so), and the requests carried what
// Claude Code sends (system messages among the turns, adaptive thinking, tools, `?beta=true`).
const program = await installAgentProgram(agentPrograms.claudeCode);
if ("skip" in program)
    console.warn(`SKIPPING the Claude Code tests: ${program.skip}`);

const key = "sk-claude-code-test";
const model = "tiny-agent";
const modelPath = path.join(testModelsDir, "tiny-agent.gguf");
const logLines: string[] = [];
let server: TestServer;
let proxy: RecordingProxy;
let refuser: RefusingProxy;
let home: string;

type Run = {code: number | null, stdout: string, stderr: string, exchanges: RecordedExchange[]};

/** Runs `claude` with `args` in a folder of its own, its home and temp files in the test's folder, pointed at the server through the recording proxy. */
function claude(args: string[], apiKey = key, target: {proxy: RecordingProxy, refuser: RefusingProxy, home: string, model: string} = {proxy, refuser, home, model}): Promise<Run> {
    const {proxy, refuser, home, model} = target;
    const before = proxy.exchanges.length;
    const env = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        CLAUDE_CONFIG_DIR: path.join(home, ".claude"),
        TMPDIR: path.join(home, "tmp"),
        ANTHROPIC_BASE_URL: proxy.url,
        ANTHROPIC_API_KEY: apiKey,
        // Every model role Claude Code has names the served model.
        ANTHROPIC_MODEL: model, ANTHROPIC_SMALL_FAST_MODEL: model, ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
        ANTHROPIC_DEFAULT_SONNET_MODEL: model, ANTHROPIC_DEFAULT_OPUS_MODEL: model,
        // Nothing but the server: no telemetry, update checks, error reports or other traffic; whatever tries
        // anything beyond loopback meets the refusing proxy, which counts it.
        DISABLE_TELEMETRY: "1", DISABLE_AUTOUPDATER: "1", DISABLE_ERROR_REPORTING: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        HTTPS_PROXY: refuser.url, HTTP_PROXY: refuser.url, ALL_PROXY: refuser.url, NO_PROXY: "127.0.0.1,localhost",
        // Its max_tokens: the model ends its turns long before.
        CLAUDE_CODE_MAX_OUTPUT_TOKENS: "256"
    };
    return new Promise((resolve) => {
        execFile((program as {bin: string}).bin, args, {cwd: path.join(home, "work"), env, timeout: 240_000, maxBuffer: 16 << 20}, (error, stdout, stderr) => {
            resolve({code: error == null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr, exchanges: proxy.exchanges.slice(before)});
        });
    });
}

/** A home of its own for `claude` runs, in the system's temp folder: `work` (where it runs) and `tmp` in it. */
function claudeHome(prefix: string): string {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    fs.mkdirSync(path.join(folder, "work"));
    fs.mkdirSync(path.join(folder, "tmp"));
    return folder;
}

/** The statuses of the server's own log lines for the Messages routes. */
function loggedStatuses(): number[] {
    return logLines.filter((line) => line.includes("/v1/messages")).map((line) => Number(/ status=(\d+)/.exec(line)?.[1]));
}

/** The body of each POST /v1/messages of a run. */
function messageRequests(run: Run) {
    return run.exchanges.filter((exchange) => exchange.method === "POST" && exchange.url.startsWith("/v1/messages"))
        .map((exchange) => ({...exchange, json: JSON.parse(exchange.body) as Record<string, unknown> & {messages: {role: string}[]}}));
}

describe.skipIf("skip" in program)("Claude Code 2.1.332 against the Messages API", () => {
    beforeAll(async () => {
        // 8-wide, one layer, one head: cheap to run over Claude Code's prompt of thousands of tokens.
        await makeTestLlamaGguf(modelPath, {
            seed: 1, chatTemplate: toolsChatTemplate, extraVocab: toolCallVocab, contextLength: 16384,
            nEmbd: 8, nLayers: 1, nHeads: 1, nKvHeads: 1, nFf: 16, endsTurn: "after a token"
        });
        server = await startTestServer({
            models: [{id: model, task: "chat", path: modelPath, contextSize: 16384, parallel: 2}],
            // Flash attention off: on the CPU it is the slower path for this tiny head over a long prompt.
            config: {apiKeys: [key], logLevel: "info", flashAttention: "off", threads: 2},
            logLines
        });
        proxy = await startRecordingProxy(server.url);
        refuser = await startRefusingProxy();
        home = claudeHome("los-claude-code-");
    }, 120_000);

    afterAll(async () => {
        await proxy?.close();
        await refuser?.close();
        await server?.stop();
        if (home != null)
            fs.rmSync(home, {recursive: true, force: true});
        fs.rmSync(modelPath, {force: true});
    });

    it("claude -p --output-format json: exits 0 with its result; every request answered 2xx, nothing beyond loopback tried; the requests carry system messages, adaptive thinking and tools", async () => {
        const run = await claude(["-p", "Say hello in one word.", "--output-format", "json", "--tools", "Bash,Read,Edit"]);
        expect(run.code, run.stderr).toBe(0);
        const result = JSON.parse(run.stdout);
        expect(result).toMatchObject({type: "result", subtype: "success", is_error: false});
        expect(typeof result.result).toBe("string");

        const requests = messageRequests(run);
        expect(requests.length).toBeGreaterThan(0);
        expect(run.exchanges.map((exchange) => exchange.status).every((status) => status >= 200 && status < 300)).toBe(true);
        expect(loggedStatuses().every((status) => status >= 200 && status < 300)).toBe(true);
        const main = requests.at(-1)!;
        expect(main.url).toBe("/v1/messages?beta=true");
        expect(main.headers["x-api-key"]).toBe(key);
        expect(main.headers["anthropic-version"]).toBe("2023-06-01");
        expect(String(main.headers["anthropic-beta"]).split(",")).toContain("claude-code-20250219");
        expect(main.json).toMatchObject({model, stream: true, max_tokens: 256, thinking: {type: "adaptive"}});
        // A system message among the turns (its environment): the 400 that used to stop Claude Code here.
        expect(main.json.messages.slice(1).some((message) => message.role === "system")).toBe(true);
        expect((main.json.tools as {name: string}[]).map((tool) => tool.name)).toEqual(expect.arrayContaining(["Bash", "Read", "Edit"]));
        // The server's answer: its request id, the same in the log; the usage Claude Code added up is the prompt's.
        const id = main.responseHeaders["request-id"];
        expect(logLines.some((line) => line.includes(`id="${id}" status=200`))).toBe(true);
        expect(result.usage.input_tokens + result.usage.cache_read_input_tokens).toBeGreaterThan(1000);
        expect(refuser.attempts).toEqual([]);
    }, 300_000);

    it("claude -p --output-format stream-json --verbose: every line is an event, the last its result; display \"updates\" thinking is accepted; the prompt cache serves the shared prefix", async () => {
        const run = await claude(["-p", "Now say goodbye.", "--output-format", "stream-json", "--verbose", "--tools", "Bash,Read,Edit"]);
        expect(run.code, run.stderr).toBe(0);
        const events = run.stdout.trim().split("\n").map((line) => JSON.parse(line) as {type: string, subtype?: string, is_error?: boolean, usage?: Record<string, number>});
        expect(events[0]).toMatchObject({type: "system", subtype: "init", model});
        expect(events.some((event) => event.type === "assistant")).toBe(true);
        const result = events.at(-1)!;
        expect(result).toMatchObject({type: "result", subtype: "success", is_error: false});
        expect(run.exchanges.every((exchange) => exchange.status >= 200 && exchange.status < 300)).toBe(true);
        expect(loggedStatuses().every((status) => status >= 200 && status < 300)).toBe(true);
        const main = messageRequests(run).at(-1)!;
        expect(main.json.thinking).toEqual({type: "adaptive", display: "updates"});
        // The system prompt and tools are the first run's: read from the prompt cache, and reported as cache reads.
        expect(result.usage!.cache_read_input_tokens).toBeGreaterThan(1000);
        expect(refuser.attempts).toEqual([]);
    }, 300_000);

    it("a wrong key: Claude Code gets Anthropic's 401 with x-should-retry: false and fails at once, without retrying", async () => {
        const run = await claude(["-p", "Say hello.", "--output-format", "json", "--tools", "Bash,Read,Edit"], "sk-wrong");
        expect(run.code).not.toBe(0);
        const requests = messageRequests(run);
        // One request: without the header it retried a 401 eleven times over three minutes.
        expect(requests.map((request) => request.status)).toEqual([401]);
        expect(requests[0].responseHeaders["x-should-retry"]).toBe("false");
        const result = JSON.parse(run.stdout);
        expect(result).toMatchObject({type: "result", is_error: true, api_error_status: 401});
        expect(refuser.attempts).toEqual([]);
    }, 300_000);
});

/** A server of one model scripted to write `hello.txt` in a Claude Code home of its own, behind a recording proxy. */
type ScriptedAgent = {model: string, home: string, target: string, server: TestServer, proxy: RecordingProxy, refuser: RefusingProxy};

/**
 * Sets up a ScriptedAgent for the describe it is called in (`gguf`: the model's options, given the file its call names),
 * and takes it down after.
 */
function scriptedAgent(model: string, contextSize: number, gguf: (target: string) => TestLlamaGgufOptions): ScriptedAgent {
    const agent = {model} as ScriptedAgent;
    const modelPath = path.join(testModelsDir, `${model}.gguf`);
    beforeAll(async () => {
        agent.home = claudeHome(`los-claude-code-${model}-`);
        agent.target = path.join(agent.home, "work", "hello.txt");
        await makeTestLlamaGguf(modelPath, gguf(agent.target));
        agent.server = await startTestServer({
            models: [{id: model, task: "chat", path: modelPath, contextSize, parallel: 2}],
            config: {apiKeys: [key], flashAttention: "off", threads: 2}
        });
        agent.proxy = await startRecordingProxy(agent.server.url);
        agent.refuser = await startRefusingProxy();
    }, 120_000);
    afterAll(async () => {
        await agent.proxy?.close();
        await agent.refuser?.close();
        await agent.server?.stop();
        if (agent.home != null)
            fs.rmSync(agent.home, {recursive: true, force: true});
        fs.rmSync(modelPath, {force: true});
    });
    return agent;
}

/**
 * What a user checks of a run where the model called Write: the file holds `content`, the call reached Claude Code as a
 * Write tool_use with its arguments, its result came back in the next turn, every request was answered 2xx and nothing
 * beyond loopback was tried. The requests that carried tools, for more checks.
 */
function expectWriteCarriedOut(run: Run, agent: ScriptedAgent, content: string) {
    expect(fs.readFileSync(agent.target, "utf8"), run.stdout + run.stderr).toBe(content);
    const requests = messageRequests(run).filter((request) => (request.json.tools as unknown[] | undefined)?.length);
    // The second turn carries the call as Claude Code understood it and the result of carrying it out.
    const turn = requests.find((request) => JSON.stringify(request.json.messages).includes("tool_result"));
    expect(turn, JSON.stringify(requests.map((request) => request.json.messages))).toBeDefined();
    const blocks = (turn!.json.messages as {role: string, content: unknown}[]).flatMap((message) => Array.isArray(message.content) ? message.content as Record<string, unknown>[] : []);
    const use = blocks.find((block) => block.type === "tool_use")!;
    expect(use).toMatchObject({name: "Write", input: {file_path: agent.target, content}});
    expect(blocks.find((block) => block.type === "tool_result")).toMatchObject({tool_use_id: use.id});
    expect(agent.proxy.exchanges.every((exchange) => exchange.status >= 200 && exchange.status < 300)).toBe(true);
    expect(agent.refuser.attempts).toEqual([]);
    return requests;
}

// A model with Qwen3-Coder's real template (test/fixtures/templates), scripted to answer every turn with a Write call in
// Qwen3-Coder's own markup (each argument in its <parameter=...> tag): Claude Code gets it as a tool_use, writes the
// file, and sends the result back. The script depends on the last token only, so the model calls Write again at every
// turn; --max-turns ends the run after the round trip.
describe.skipIf("skip" in program)("Claude Code carries out a call a Qwen3-Coder model writes in its markup", () => {
    const agent = scriptedAgent("coder-agent", 32768, (target) => {
        const pieces = ["<tool_call>", "\n<function=Write>\n<parameter=file_path>\n", target, "\n</parameter>\n<parameter=content>\n",
            "hello-from-a-local-coder", "\n</parameter>\n</function>\n", "</tool_call>", "<|im_end|>"];
        return {
            seed: 3, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "Qwen3-Coder.jinja"), "utf8"),
            userDefinedVocab: ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"], extraVocab: pieces.slice(1, -2),
            contextLength: 32768, nEmbd: 64, nLayers: 1, nHeads: 1, nKvHeads: 1, nFf: 64,
            script: scriptThrough(["\n", ...pieces])
        };
    });

    it("the call reaches Claude Code as a Write tool_use with its arguments, the file is written, and its result comes back", async () => {
        const run = await claude(["-p", "Write hello.txt.", "--output-format", "json", "--tools", "Write", "--allowedTools", "Write", "--max-turns", "2"], key, agent);
        expectWriteCarriedOut(run, agent, "hello-from-a-local-coder");
    }, 300_000);
});

// The same with Gemma 4's real template: the call written in Gemma 4's notation (`<|tool_call>call:Write{...}<tool_call|>`,
// strings between `<|"|>` marks), after Claude Code's whole default tool set went through the template (some of its tools'
// properties have no `type`, which the template upper-cases: @huggingface/jinja failed on it; Python's Jinja writes "").
describe.skipIf("skip" in program)("Claude Code carries out a call a Gemma 4 model writes in its notation", () => {
    const agent = scriptedAgent("gemma-agent", 40960, (target) => {
        const pieces = ["<|tool_call>call:Write{content:", '<|"|>hello-from-gemma<|"|>', ",file_path:", `<|"|>${target}<|"|>`, "}<tool_call|>", "<|tool_response>"];
        return {
            seed: 4, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "google-gemma-4-31B-it.jinja"), "utf8"),
            userDefinedVocab: ["<|turn>", "<turn|>", "<|channel>", "<channel|>", "<|think|>", "<|tool_call>", "<tool_call|>", "<|tool>", "<tool|>", "<tool_response|>", '<|"|>'],
            controlVocab: ["<|tool_response>"], extraVocab: ["\n", ...pieces.slice(0, -1), "Done."],
            contextLength: 40960, nEmbd: 16, nLayers: 1, nHeads: 1, nKvHeads: 1, nFf: 32,
            // After the tool's result the model answers "Done." and ends its turn.
            script: [...scriptThrough(["\n", ...pieces]), ["<tool_response|>", "Done."], ["Done.", "<|im_end|>"]]
        };
    });

    it("with its default tools: the call reaches Claude Code as a Write tool_use, the file is written, and its result comes back", async () => {
        const run = await claude(["-p", "Write hello.txt.", "--output-format", "json", "--allowedTools", "Write", "--max-turns", "3"], key, agent);
        const requests = expectWriteCarriedOut(run, agent, "hello-from-gemma");
        expect((requests[0].json.tools as unknown[]).length).toBeGreaterThan(5);
    }, 300_000);
});
