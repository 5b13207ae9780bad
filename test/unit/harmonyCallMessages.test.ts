import { describe, expect, it } from "vitest";
import { HarmonySplitter } from "../../src/capabilities/chat/llama/text/HarmonySplitter.js";
import { harmonyCallFormat } from "../../src/capabilities/chat/llama/text/harmonyCalls.js";
import { parseToolCalls } from "../../src/capabilities/chat/llama/parseToolCalls.js";
import { ToolCallStream } from "../../src/capabilities/chat/llama/ToolCallStream.js";

const names = new Set(["get_weather"]);
function run(text: string, size: number, ended = true) {
    const splitter = new HarmonySplitter("undecided");
    let reasoning = "", content = "";
    const events: unknown[] = [];
    const stream = new ToolCallStream(harmonyCallFormat, names, true, (e) => events.push(e));
    for (let at = 0; at < text.length; at += size) {
        const out = splitter.push(text.slice(at, at + size));
        reasoning += out.reasoning; content += out.content;
        stream.push(out.content);
    }
    const rest = splitter.flush(ended);
    reasoning += rest.reasoning; content += rest.content; stream.push(rest.content); stream.finish();
    const parsed = parseToolCalls(content, harmonyCallFormat, names, false);
    const streamedContent = events.filter((e: any) => e.type === "content").map((e: any) => e.text).join("");
    const streamedCalls = events.filter((e: any) => e.type === "call").map((e: any) => e.name);
    return {reasoning: reasoning.trim(), content: parsed?.content ?? content, calls: parsed?.calls.map((c) => [c.name, JSON.parse(c.arguments)]) ?? [], streamedContent, streamedCalls};
}

const args = '{"city":"Paris"}';
// Real gpt-oss outputs (llama.cpp's gpt-oss.cpp reads all of these): `<|end|>` detokenizes to nothing.
const shapes: [string, string, string, string][] = [
    ["constrain token", `<|channel|>analysis<|message|>Need.<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>${args}`, "Need.", ""],
    ["no constrain", `<|channel|>analysis<|message|>Need.<|start|>assistant<|channel|>commentary to=functions.get_weather<|message|>${args}`, "Need.", ""],
    ["constrain without token", `<|channel|>analysis<|message|>Need.<|start|>assistant<|channel|>commentary to=functions.get_weather json<|message|>${args}`, "Need.", ""],
    ["recipient in role header", `<|channel|>analysis<|message|>Need.<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>${args}`, "Need.", ""],
    ["analysis channel call", `<|channel|>analysis<|message|>Need.<|start|>assistant<|channel|>analysis to=functions.get_weather <|constrain|>json<|message|>${args}`, "Need.", ""],
    ["preamble then call", `<|channel|>analysis<|message|>Need.<|start|>assistant<|channel|>commentary<|message|>Checking.<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>${args}`, "Need.", "Checking."],
    ["stray commentary before analysis", `<|channel|>commentary<|channel|>analysis<|message|>Need.<|start|>assistant<|channel|>final<|message|>Hi`, "Need.", "Hi"],
    ["stray commentary to=assistant before analysis", `<|channel|>commentary to=assistant<|channel|>analysis<|message|>Need.<|start|>assistant<|channel|>final<|message|>Hi`, "Need.", "Hi"],
    ["whitespace around args", `<|channel|>analysis<|message|>Need.<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|> ${args} `, "Need.", ""],
    ["stray commentary before call", `<|channel|>analysis<|message|>Need.<|start|>assistant<|channel|>commentary<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>${args}`, "Need.", ""]
];

describe("real gpt-oss outputs", () => {
    it.each(shapes)("%s", (_name, text, reasoning, content) => {
        const wantsCall = text.includes("to=functions");
        for (const size of [1, 3, text.length]) {
            const got = run(text, size);
            expect({size, reasoning: got.reasoning, content: got.content, calls: got.calls}).toEqual({size, reasoning, content, calls: wantsCall ? [["get_weather", {city: "Paris"}]] : []});
            expect({size, streamedContent: got.streamedContent.trim(), streamedCalls: got.streamedCalls}).toEqual({size, streamedContent: content, streamedCalls: wantsCall ? ["get_weather"] : []});
        }
    });
});

describe("no calls read (tool_choice none)", () => {
    it("a call message is dropped, the preamble stays", () => {
        const splitter = new HarmonySplitter("undecided", false);
        const text = `<|channel|>analysis<|message|>Need.<|start|>assistant<|channel|>commentary<|message|>Checking.<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>${args}`;
        let content = "";
        for (const ch of text)
            content += splitter.push(ch).content;
        content += splitter.flush(true).content;
        expect(content).toBe("Checking.");
    });
});

describe("output that starts in the answer (thinking off's `<|channel|>final<|message|>` tail, a prefill continued)", () => {
    it.each(["<div>Hi</div>", "to=me: hi", "Plain"])("%s is all answer", (text) => {
        const splitter = new HarmonySplitter("answer");
        let content = "";
        for (const ch of text)
            content += splitter.push(ch).content;
        content += splitter.flush(true).content;
        expect(content).toBe(text);
    });
});
