import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";
import { followUpPrompt } from "../support/scriptedToolCalls.js";
import { callOf, weatherQuestion as messages, weatherTools as tools } from "../support/weatherTool.js";

// Magistral's and Ministral-3 Reasoning's thought, `[THINK]...[/THINK]` before the answer (control tokens of their
// vocabulary), on a model with Ministral-3-14B-Reasoning-2512's real template, scripted: after the prompt's `[/INST]` it
// thinks, then answers (`chat`) or calls (`calls`). The thought comes back as reasoning in every API, streamed as the body
// has it; thinking off closes an empty thought in the prompt (the script then goes straight to the answer); a call's thought
// sent back goes to the template as the thinking block it reads. Before, the thought was the answer's text.

const template = () => fs.readFileSync(path.join(realTemplatesDir, "mistralai-Ministral-3-14B-Reasoning-2512.jinja"), "utf8");
const controlVocab = ["[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[THINK]", "[/THINK]", "[TOOL_CALLS]", "[ARGS]",
    "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]"];
const thought = ["Weather", "▁first"];
const callPieces = ["get_weather", "[ARGS]", '{"city":▁"Paris"}'];

describe("Mistral's [THINK] reasoning (Ministral-3 Reasoning's real template)", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        const make = (name: string, seed: number, answer: string[]) => makeTestLlamaGguf(path.join(testModelsDir, name), {
            seed, chatTemplate: template(), controlVocab, extraVocab: [...thought, ...answer.filter((piece) => !controlVocab.includes(piece))],
            script: scriptThrough(["[/INST]", "[THINK]", ...thought, "[/THINK]", ...answer, "<|im_end|>"])
        });
        await make("mistral-think-chat.gguf", 95, ["Hello", "▁there"]);
        await make("mistral-think-calls.gguf", 96, ["[TOOL_CALLS]", ...callPieces]);
        server = await startTestServer({models: [
            {id: "chat", task: "chat", path: path.join(testModelsDir, "mistral-think-chat.gguf"), contextSize: 2048, parallel: 1},
            {id: "calls", task: "chat", path: path.join(testModelsDir, "mistral-think-calls.gguf"), contextSize: 2048, parallel: 1}
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
        const streamed = await server.client.chat.completions.stream(request).finalChatCompletion();
        expect(streamed.choices[0].message.content).toBe("Hello there");
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
});
