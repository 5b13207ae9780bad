import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { streamedChat } from "../support/streamedChat.js";
import { testModelsDir } from "../support/testModels.js";
import { followUpPrompt } from "../support/scriptedToolCalls.js";
import { callOf, weatherQuestion as messages, weatherTools as tools } from "../support/weatherTool.js";

// Magistral's and Ministral-3 Reasoning's thought, `[THINK]...[/THINK]` before the answer (control tokens of their
// vocabulary), on a model with Ministral-3-14B-Reasoning-2512's real template, scripted: after the prompt's `[/INST]` it
// thinks, then answers (`chat`) or calls (`calls`). The thought comes back as reasoning in every API, streamed as the body
// has it; thinking off closes an empty thought in the prompt (the script then goes straight to the answer); a call's thought
// sent back goes to the template as the thinking block it reads. Before, the thought was the answer's text.

const template = () => fs.readFileSync(path.join(realTemplatesDir, "mistralai-Ministral-3-14B-Reasoning-2512.jinja"), "utf8");
// mistral-common's v15 thinking template: `[MODEL_SETTINGS]{"reasoning_effort": ...}`, none (its default) or high, and nothing else.
const v15Template = () => fs.readFileSync(path.join(realTemplatesDir, "mistral-common-v15-think.jinja"), "utf8");
const controlVocab = ["[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[THINK]", "[/THINK]", "[TOOL_CALLS]", "[ARGS]",
    "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]"];
const thought = ["Weather", "▁first"];
const callPieces = ["get_weather", "[ARGS]", '{"city":▁"Paris"}'];

describe("Mistral's [THINK] reasoning (Ministral-3 Reasoning's real template)", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        const make = (name: string, seed: number, answer: string[], chatTemplate = template()) => makeTestLlamaGguf(path.join(testModelsDir, name), {
            seed, chatTemplate, controlVocab: [...controlVocab, "[MODEL_SETTINGS]", "[/MODEL_SETTINGS]"], extraVocab: [...thought, ...answer.filter((piece) => !controlVocab.includes(piece))],
            script: scriptThrough(["[/INST]", "[THINK]", ...thought, "[/THINK]", ...answer, "<|im_end|>"])
        });
        await make("mistral-think-chat.gguf", 95, ["Hello", "▁there"]);
        await make("mistral-think-calls.gguf", 96, ["[TOOL_CALLS]", ...callPieces]);
        await make("mistral-think-v15.gguf", 97, ["Hello", "▁there"], v15Template());
        server = await startTestServer({models: [
            {id: "chat", task: "chat", path: path.join(testModelsDir, "mistral-think-chat.gguf"), contextSize: 2048, parallel: 1},
            {id: "calls", task: "chat", path: path.join(testModelsDir, "mistral-think-calls.gguf"), contextSize: 2048, parallel: 1},
            {id: "v15", task: "chat", path: path.join(testModelsDir, "mistral-think-v15.gguf"), contextSize: 2048, parallel: 1}
        ]});
    }, 60_000);
    afterAll(() => server?.stop());

    it("the thought is reasoning_content and the answer is the content, streamed alike", async () => {
        const request = {model: "chat", temperature: 0, max_tokens: 32, messages};
        const completion = await server.client.chat.completions.create(request);
        const message = completion.choices[0].message as {content: string | null, reasoning_content?: string};
        expect(message.reasoning_content).toBe("Weather first");
        expect(message.content).toBe("Hello there");
        expect(completion.usage!.completion_tokens_details?.reasoning_tokens).toBe(4);
        expect(await streamedChat(server.client, request)).toEqual({reasoning: "Weather first", content: "Hello there"});
    });

    it("Anthropic Messages: a thinking block, then the text", async () => {
        const response = await server.post("/v1/messages", {model: "chat", max_tokens: 32, messages});
        const body = await response.json() as {content: {type: string, thinking?: string, text?: string}[]};
        expect(body.content.map((block) => [block.type, block.thinking ?? block.text])).toEqual([["thinking", "Weather first"], ["text", "Hello there"]]);
    });

    it("thinking off: the prompt closes an empty thought ([THINK][/THINK]) and the model answers at once", async () => {
        const completion = await server.client.chat.completions.create({model: "chat", temperature: 0, max_tokens: 32, messages, reasoning_effort: "none"});
        const message = completion.choices[0].message as {content: string | null, reasoning_content?: string};
        expect(message.reasoning_content ?? null).toBeNull();
        expect(message.content).toBe("Hello there");
        // The two tokens of the empty thought: the prompt is the one with thinking on and [THINK][/THINK] after it.
        const on = await server.client.chat.completions.create({model: "chat", temperature: 0, max_tokens: 1, messages});
        expect(completion.usage!.prompt_tokens).toBe(on.usage!.prompt_tokens + 2);
    });

    it("a user's text quoting [THINK] opens no thought: the reply is split as any (found by review)", async () => {
        const quoting = [{role: "user" as const, content: "What does [THINK] mean?"}];
        const completion = await server.client.chat.completions.create({model: "chat", temperature: 0, max_tokens: 32, messages: quoting});
        const message = completion.choices[0].message as {content: string | null, reasoning_content?: string};
        expect([message.reasoning_content, message.content]).toEqual(["Weather first", "Hello there"]);
        // Thinking off: the empty thought after it, as after any other text.
        const off = await server.client.chat.completions.create({model: "chat", temperature: 0, max_tokens: 32, messages: quoting, reasoning_effort: "none"});
        expect([(off.choices[0].message as {reasoning_content?: string}).reasoning_content ?? null, off.choices[0].message.content]).toEqual([null, "Hello there"]);
        expect(off.usage!.prompt_tokens).toBe(completion.usage!.prompt_tokens + 2);
    });

    it("a call after the thought: tool_calls, and the thought as reasoning", async () => {
        const completion = await server.client.chat.completions.create({model: "calls", temperature: 0, max_tokens: 32, messages, tools});
        const message = completion.choices[0].message as {content: string | null, reasoning_content?: string, tool_calls?: unknown[]};
        expect(completion.choices[0].finish_reason).toBe("tool_calls");
        expect(message.reasoning_content).toBe("Weather first");
        expect(message.content).toBeNull();
        expect(completion.choices[0].message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris"}]]);
    });

    it("the follow-up's prompt has the call's thought as the template writes a thinking block, before the call", async () => {
        const {text} = await followUpPrompt(server, "calls");
        expect(text).toContain('[/INST][THINK]Weatherfirst[/THINK][TOOL_CALLS]get_weather[ARGS]{"city":"Paris"}');
    });

    it("an earlier answer's thought goes back as the template writes it, sent as reasoning_content or an Anthropic thinking block (found by review)", async () => {
        const tokenized = async (body: Record<string, unknown>) =>
            (await (await server.post("/v1/tokenize", {model: "chat", with_pieces: true, ...body})).json() as {tokens: {piece: string}[]}).tokens.map((token) => token.piece).join("").replaceAll(" ", "");
        const text = await tokenized({messages: [...messages, {role: "assistant", content: "Hello there", reasoning_content: "Weather first"}, {role: "user", content: "Again"}]});
        expect(text).toContain("[/INST][THINK]Weatherfirst[/THINK]Hellothere<|im_end|>[INST]Again[/INST]");
        // Anthropic Messages: the same conversation with a thinking block; its prompt is the one above (as many tokens).
        const first = await server.post("/v1/messages", {model: "chat", max_tokens: 32, messages});
        const {content} = await first.json() as {content: unknown[]};
        const followUp = await server.post("/v1/messages", {model: "chat", max_tokens: 1, messages: [...messages, {role: "assistant", content}, {role: "user", content: "Again"}]});
        type Usage = {usage: {input_tokens: number, cache_read_input_tokens?: number | null, cache_creation_input_tokens?: number | null}};
        const promptOf = ({usage}: Usage) => usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0);
        const sameAsChat = await server.post("/v1/tokenize", {model: "chat", messages: [...messages, {role: "assistant", content: "Hello there", reasoning_content: "Weather first"}, {role: "user", content: "Again"}]});
        expect(promptOf(await followUp.json() as Usage)).toBe((await sameAsChat.json() as {count: number}).count);
    });

    describe("a template with its own efforts (mistral-common's v15: none or high; found by review)", () => {
        const promptTokens = async (kwargs?: Record<string, unknown>) =>
            (await (await server.post("/v1/tokenize", {model: "v15", messages, ...(kwargs == null ? {} : {chat_template_kwargs: kwargs})})).json() as {count: number}).count;

        it("any effort a client asks for is its 'high' (Codex sends medium): the model thinks, no 400", async () => {
            for (const effort of ["low", "medium", "high"] as const) {
                const completion = await server.client.chat.completions.create({model: "v15", temperature: 0, max_tokens: 32, messages, reasoning_effort: effort});
                const message = completion.choices[0].message as {content: string | null, reasoning_content?: string};
                expect([message.reasoning_content, message.content]).toEqual(["Weather first", "Hello there"]);
                expect(completion.usage!.prompt_tokens).toBe(await promptTokens({reasoning_effort: "high"}));
            }
        });

        it("thinking off is its 'none', with no empty thought after it (the template's settings say the model answers at once)", async () => {
            const completion = await server.client.chat.completions.create({model: "v15", temperature: 0, max_tokens: 1, messages, reasoning_effort: "none"});
            expect(completion.usage!.prompt_tokens).toBe(await promptTokens({reasoning_effort: "none"}));
        });

        it("a request that says nothing keeps the template's default (none): a schema's grammar opens no thought", async () => {
            const completion = await server.client.chat.completions.create({model: "v15", temperature: 0, max_tokens: 1, messages,
                response_format: {type: "json_schema", json_schema: {name: "w", schema: {type: "object", properties: {a: {type: "string"}}}}}});
            expect(completion.usage!.prompt_tokens).toBe(await promptTokens());
            expect(await promptTokens()).toBe(await promptTokens({reasoning_effort: "none"}));
        });
    });
});
