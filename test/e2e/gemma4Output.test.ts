import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";
import { callOf, weatherTools as tools } from "../support/weatherTool.js";

// Models with Gemma 4's real template, scripted: a forced call's grammar writes only what the argument reader reads (JSON
// numbers, strings holding "<"), and the stray markup Gemma 4 may write after its answer (a lone <channel|>, an empty
// thought block: llama.cpp's gemma4 parser drops it) stays out of the content, streamed and not.
const template = () => fs.readFileSync(path.join(realTemplatesDir, "google-gemma-4-31B-it.jinja"), "utf8");
const userDefinedVocab = ["<|turn>", "<turn|>", "<|channel>", "<channel|>", "<|think|>", "<|tool_call>", "<tool_call|>", "<|tool>", "<tool|>", "<tool_response|>", '<|"|>'];
const messages = [{role: "user" as const, content: "Weather in Paris?"}];

// Thinking off: the prompt ends with the template's `<|channel>thought\n<channel|>`; the script starts there.
const leadingZero = ["<|tool_call>call:get_weather{city:", '<|"|>Paris<|"|>', ",days:", "0", "2", "}<tool_call|>", "<|tool_response>"];
const lessThan = ["<|tool_call>call:get_weather{city:", '<|"|>a<b<|"|>', "}<tool_call|>", "<|tool_response>"];
// Thinking on (the model decides after `<|turn>model\n`): an answer, then a stray `<channel|>` (llama.cpp's gemma4 parser
// drops it: "It may also emit a single trailing <channel|> token").
const trailingClose = ["\n", "Hello", "<channel|>", "<|tool_response>"];
// A thought, the answer's start, a late thought (llama.cpp's gemma4 parser reads it as reasoning), the rest of the answer
// (the second close tag in two pieces: a script passes through each piece once).
// An answer with a lone '<' (held: it may open a thought block) and no stop sequences (found by review: "a<b" came out "ab<").
const lessThanAnswer = ["<channel|>", "a", "<", "b", "<|tool_response>"];
// The answer's first token with a '<' held after its text ("Hi <"): its text is searched with it (found by review).
const heldAfterStart = ["<channel|>", "Hi▁<", "b>", "<|tool_response>"];
const lateThought = ["\n", "<|channel>", "thought", "▁I", "▁think", "<channel|>", "Hello", "<|channel>thought", "▁more", "<chan", "nel|>", "▁world", "<|tool_response>"];

describe("Gemma 4: forced calls by its grammar, and its markup after the answer (its real template)", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        const make = (name: string, seed: number, pieces: string[]) => makeTestLlamaGguf(path.join(testModelsDir, name), {
            seed, chatTemplate: template(), userDefinedVocab, controlVocab: ["<|tool_response>"],
            extraVocab: ["\n", "<|channel>thought", ...pieces.filter((piece) => !["\n", "<channel|>", "<|tool_response>"].includes(piece))],
            script: scriptThrough(pieces)
        });
        await make("gemma4-output-zero.gguf", 94, ["<channel|>", ...leadingZero]);
        await make("gemma4-output-lt.gguf", 95, ["<channel|>", ...lessThan]);
        await make("gemma4-output-close.gguf", 96, trailingClose);
        await make("gemma4-output-late.gguf", 97, lateThought);
        await make("gemma4-output-lt-answer.gguf", 98, lessThanAnswer);
        await make("gemma4-output-held-start.gguf", 99, heldAfterStart);
        server = await startTestServer({models: [
            {id: "zero", task: "chat", path: path.join(testModelsDir, "gemma4-output-zero.gguf"), contextSize: 2048, parallel: 1},
            {id: "lt", task: "chat", path: path.join(testModelsDir, "gemma4-output-lt.gguf"), contextSize: 2048, parallel: 1},
            {id: "close", task: "chat", path: path.join(testModelsDir, "gemma4-output-close.gguf"), contextSize: 2048, parallel: 1},
            {id: "late", task: "chat", path: path.join(testModelsDir, "gemma4-output-late.gguf"), contextSize: 2048, parallel: 1},
            {id: "lt-answer", task: "chat", path: path.join(testModelsDir, "gemma4-output-lt-answer.gguf"), contextSize: 2048, parallel: 1},
            {id: "held-start", task: "chat", path: path.join(testModelsDir, "gemma4-output-held-start.gguf"), contextSize: 2048, parallel: 1}
        ]});
    }, 120_000);
    afterAll(() => server?.stop());

    it("a forced call whose integer the grammar let the model write with a leading zero is read (or the grammar forbids it)", async () => {
        const completion = await server.client.chat.completions.create({model: "zero", temperature: 0, max_tokens: 64, tools, messages,
            tool_choice: "required", parallel_tool_calls: false, reasoning_effort: "none"});
        const [choice] = completion.choices;
        expect(choice.message.content ?? null).toBeNull();
        expect(choice.finish_reason).toBe("tool_calls");
        expect(choice.message.tool_calls!.map(callOf)[0]![0]).toBe("get_weather");
    });

    it("a forced call may write '<' in a string (llama.cpp's grammar: anything but <|\"|>)", async () => {
        const completion = await server.client.chat.completions.create({model: "lt", temperature: 0, max_tokens: 64, tools, messages,
            tool_choice: "required", parallel_tool_calls: false, reasoning_effort: "none"});
        expect(completion.choices[0].message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "a<b"}]]);
    });

    it("a stray trailing <channel|> after the answer is not content, streamed or not", async () => {
        const request = {model: "close", temperature: 0, max_tokens: 16, messages};
        const completion = await server.client.chat.completions.create(request);
        expect(completion.choices[0].message.content).toBe("Hello");
        const streamed = await server.client.chat.completions.stream(request).finalChatCompletion();
        expect(streamed.choices[0].message.content).toBe("Hello");
    });

    it("a late thought is reasoning in every API; Responses gives it a reasoning item of its own, streamed as the body has it (found by review)", async () => {
        const chat = await server.client.chat.completions.create({model: "late", temperature: 0, max_tokens: 32, messages});
        expect([(chat.choices[0].message as {reasoning_content?: string}).reasoning_content, chat.choices[0].message.content]).toEqual(["I think more", "Hello world"]);
        const response = await server.client.responses.create({model: "late", temperature: 0, max_output_tokens: 32, input: "Weather in Paris?"});
        const texts = response.output.map((item) => item.type === "reasoning" ? ["reasoning", item.content?.[0]?.text] : item.type === "message"
            ? ["message", item.content[0].type === "output_text" ? item.content[0].text : ""] : [item.type]);
        expect(texts).toEqual([["reasoning", "I think"], ["message", "Hello world"], ["reasoning", "more"]]);
        expect(new Set(response.output.map((item) => item.id)).size).toBe(3);
        const streamed = await server.client.responses.stream({model: "late", temperature: 0, max_output_tokens: 32, input: "Weather in Paris?"}).finalResponse();
        expect(streamed.output.map((item) => item.type)).toEqual(["reasoning", "message", "reasoning"]);
        // A stop sequence in the late thought is not the answer's: the answer goes on (found by review).
        const stopped = await server.client.chat.completions.create({model: "late", temperature: 0, max_tokens: 32, messages, stop: ["more"]});
        expect(stopped.choices[0].message.content).toBe("Hello world");
    });

    it("a '<' in the answer stays in its place, with and without stop sequences, streamed and not", async () => {
        const request = {model: "lt-answer", temperature: 0, max_tokens: 16, messages, reasoning_effort: "none" as const};
        expect((await server.client.chat.completions.create(request)).choices[0].message.content).toBe("a<b");
        expect((await server.client.chat.completions.stream(request).finalChatCompletion()).choices[0].message.content).toBe("a<b");
        expect((await server.client.chat.completions.create({...request, stop: ["zzz"]})).choices[0].message.content).toBe("a<b");
        // A stop in the answer's first token and what was held after it ("a<" here: "a" then the held "<").
        expect((await server.client.chat.completions.create({...request, stop: ["a<"]})).choices[0].message.content).toBe("");
        const held = {...request, model: "held-start"};
        expect((await server.client.chat.completions.create(held)).choices[0].message.content).toBe("Hi <b>");
        expect((await server.client.chat.completions.create({...held, stop: ["Hi"]})).choices[0].message.content).toBe("");
    });
});

