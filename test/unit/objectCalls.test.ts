import { describe, expect, it } from "vitest";
import type { ToolCallFormat } from "../../src/capabilities/chat/ChatEngine.js";
import { parseToolCalls } from "../../src/capabilities/chat/llama/parseToolCalls.js";
import { ToolCallStream, type ToolCallStreamEvent } from "../../src/capabilities/chat/llama/ToolCallStream.js";

// Llama 3.1-3.3 write a call as a JSON object, `{"name": ..., "parameters": {...}}` (the format node-llama-cpp detects from
// their template, with no call end: the arguments' object ends the call, then the call's own `}`). What they write, as
// llama.cpp's tests/test-chat.cpp has it: one call, several separated by a line break or `;`, or side by side (what a
// forced grammar with parallel calls lets through); streamed piece by piece as parsed whole.
const llamaFormat: ToolCallFormat = {prefix: '{"name": "', paramsPrefix: '", "parameters": ', suffix: "", betweenCalls: ""};
const names = new Set(["get_weather", "get_time"]);
const paris = '{"name": "get_weather", "parameters": {"city": "Paris"}}';
const rome = '{"name": "get_time", "parameters": {"city": "Rome", "tz": {"dst": true}}}';

function streamed(text: string, hold: boolean) {
    let content = "";
    const calls: {name: string, arguments: string}[] = [];
    const stream = new ToolCallStream(llamaFormat, names, hold, (event: ToolCallStreamEvent) => {
        if (event.type === "content")
            content += event.text;
        else if (event.type === "call")
            calls[event.index] = {name: event.name, arguments: ""};
        else
            calls[event.index].arguments += event.fragment;
    });
    for (const char of text)
        stream.push(char);
    stream.finish();
    return {content, calls: calls.map((call) => ({...call, arguments: call.arguments.trim()}))};
}

describe("calls that are JSON objects (Llama 3.1-3.3)", () => {
    it.each([
        ["one call", paris, 1],
        ["two, a line break between", `${paris}\n${rome}`, 2],
        ["two, a semicolon between", `${paris}; ${rome}`, 2],
        ["two side by side", `${paris}${rome}`, 2],
        ["text after a call (dropped)", `${paris} and more`, 1],
        ["text before a call (content)", `Let me check. ${paris}`, 1]
    ])("%s: read, streamed and not", (_label, text, count) => {
        const parsed = parseToolCalls(text, llamaFormat, names)!;
        expect(parsed.calls.map((call) => call.name)).toEqual(["get_weather", "get_time"].slice(0, count));
        expect(JSON.parse(parsed.calls[0].arguments)).toEqual({city: "Paris"});
        if (count === 2)
            expect(JSON.parse(parsed.calls[1].arguments)).toEqual({city: "Rome", tz: {dst: true}});
        for (const hold of [true, false])
            expect(streamed(text, hold), `hold ${hold}`).toEqual({content: parsed.content, calls: parsed.calls.map(({name, arguments: args}) => ({name, arguments: args}))});
    });
});

// What Llama 3.x models write besides the template's spelling, which llama.cpp reads too (common/chat-peg-parser.cpp,
// build_json_tools_flat_keys: whitespace between the tokens, OpenAI's `"type": "function",` first): each was content before.
describe("Llama 3.x's other spellings of a call", () => {
    it.each([
        ["no spaces", '{"name":"get_weather","parameters":{"city":"Paris"}}'],
        ['"type": "function" first (Llama 3.2)', '{"type": "function", "name": "get_weather", "parameters": {"city": "Paris"}}'],
        ['"type":"function" first, no spaces', '{"type":"function","name":"get_weather","parameters":{"city":"Paris"}}'],
        ["one key per line", '{\n  "name": "get_weather",\n  "parameters": {\n    "city": "Paris"\n  }\n}'],
        ["spaces around every token", '{ "name" : "get_weather" , "parameters" : { "city" : "Paris" } }'],
        ["after text", 'Sure. {"type": "function", "name": "get_weather", "parameters": {"city": "Paris"}}']
    ])("%s: read, streamed and not", (_label, text) => {
        const parsed = parseToolCalls(text, llamaFormat, names)!;
        expect(parsed.calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([["get_weather", {city: "Paris"}]]);
        expect(parsed.content).toBe(text.startsWith("Sure.") ? "Sure." : "");
        for (const hold of [true, false])
            expect(streamed(text, hold), `hold ${hold}`).toEqual({content: parsed.content, calls: parsed.calls.map(({name, arguments: args}) => ({name, arguments: args}))});
    });

    it("two calls in the other spellings, a semicolon between", () => {
        const text = '{"type":"function","name":"get_weather","parameters":{"city":"Paris"}};\n{ "name": "get_time", "parameters": {"city": "Rome"} }';
        const parsed = parseToolCalls(text, llamaFormat, names)!;
        expect(parsed.calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([["get_weather", {city: "Paris"}], ["get_time", {city: "Rome"}]]);
        for (const hold of [true, false])
            expect(streamed(text, hold).calls).toEqual(parsed.calls);
    });

    it.each([
        ["JSON that is not a call", '{"type": "object", "name": "get_weather", "parameters": {}}'],
        ["braces in prose", "Use {braces} and { \"name\" } in text."],
        ["an unknown function", '{"name":"get_news","parameters":{}}'],
        ["a call's start at the end", 'Answer: {"type": "func']
    ])("%s: content, streamed and not", (_label, text) => {
        expect(parseToolCalls(text, llamaFormat, names)).toBeNull();
        expect(streamed(text, true)).toEqual({content: text, calls: []});
    });

    it("a forced call cut inside the other spellings' start is not content", () => {
        expect(parseToolCalls('{"type": "function", "na', llamaFormat, names, true)).toEqual({content: "", calls: [], complete: false});
        expect(streamed('{"type": "function", "na', false)).toEqual({content: "", calls: []});
    });
});


// What is held back while a call may be starting is bounded (found by review: a JSON answer was held to its end, and a
// `{` before a long run of whitespace made every piece rescan it, quadratic in the answer's length).
describe("Llama 3.x: JSON answers that are not calls stream as they come", () => {
    function pushedBeforeTheEnd(text: string) {
        let content = "";
        const stream = new ToolCallStream(llamaFormat, names, true, (event: ToolCallStreamEvent) => {
            if (event.type === "content")
                content += event.text;
        });
        for (const char of text)
            stream.push(char);
        const before = content;
        stream.finish();
        return {before, all: content};
    }

    it("a JSON object whose first key is \"name\" but not a call's: out once its name is closed", () => {
        const text = '{\n  "name": "Bob",\n  "age": 42,\n  "city": "Paris"\n}';
        const {before, all} = pushedBeforeTheEnd(text);
        expect(all).toBe(text);
        expect(before).toBe(text.trimEnd());
        expect(parseToolCalls(text, llamaFormat, names)).toBeNull();
    });

    it("a brace before more than 64 whitespace characters is not a call's start: out at once", () => {
        let content = "";
        const stream = new ToolCallStream(llamaFormat, names, true, (event: ToolCallStreamEvent) => {
            if (event.type === "content")
                content += event.text;
        });
        for (const char of "Data: {" + "\n".repeat(200))
            stream.push(char);
        // Out as it comes: the brace too, once more than 64 whitespace characters follow it (the whitespace itself is
        // held, as any content's trailing whitespace is until more text comes).
        expect(content).toBe("Data: {");
        stream.push('"a": 1}');
        stream.finish();
        expect(content).toBe("Data: {" + "\n".repeat(200) + '"a": 1}');
        expect(parseToolCalls("{" + "\n".repeat(200) + '"a": 1}', llamaFormat, names)).toBeNull();
        // Up to 64 between two tokens is a call's.
        const spaced = `{${" ".repeat(64)}"name":${"\n".repeat(64)}"get_weather", "parameters": {"city": "Paris"}}`;
        expect(parseToolCalls(spaced, llamaFormat, names)!.calls.map((call) => call.name)).toEqual(["get_weather"]);
        expect(streamed(spaced, true).calls.map((call) => call.name)).toEqual(["get_weather"]);
    });
});
