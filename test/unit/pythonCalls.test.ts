import fs from "node:fs";
import path from "node:path";
import { Template } from "@huggingface/jinja";
import { describe, expect, it } from "vitest";
import { argumentsReader, parseToolCalls } from "../../src/capabilities/chat/llama/parseToolCalls.js";
import { pythonArgumentsJson, pythonCallsText, pythonListCallFormat } from "../../src/capabilities/chat/llama/pythonCalls.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { ToolCallStream } from "../../src/capabilities/chat/llama/ToolCallStream.js";
import { toolCallGrammarText } from "../../src/capabilities/chat/llama/toolCallGrammar.js";
import { streamToolCalls } from "../support/streamToolCalls.js";

// LFM2 and LFM2.5 (Liquid AI) write calls as a Python list of calls with keyword arguments between two markers:
// `<|tool_call_start|>[get_weather(city="Paris"), get_time(zone='CET')]<|tool_call_end|>`; llama.cpp's LFM2 parser
// (common/parsers/lfm2.cpp) reads Python literals and JSON's, and so does the server.
const format = pythonListCallFormat;
const names = new Set(["get_weather", "get_time"]);
const functions = [...names].map((name) => ({name, parameters: {type: "object"}}));
const read = argumentsReader(format, functions);
const parse = (text: string, truncated = false) => parseToolCalls(text, format, names, truncated, read);
const json = (calls: {name: string, arguments: string}[]) => calls.map((call) => [call.name, JSON.parse(call.arguments)]);

describe("LFM2's Python call notation", () => {
    it("reads keyword arguments: strings in either quote with escapes, numbers, True/False/None, JSON's literals, lists, tuples, dicts", () => {
        const written = `city="Paris, \\"the capital\\" (FR)", zone='it\\'s', days=2, ratio=-1.5e3, metric=True, exact=false, note=None, other=null,`
            + ` tags=['a', "b"], pair=(1, 2), opts={"unit": 'c', 'deep': {"x": [1, {"y": False}]}}, line="a\\nb\\u00e9"`;
        expect(JSON.parse(pythonArgumentsJson(written)!)).toEqual({
            city: 'Paris, "the capital" (FR)', zone: "it's", days: 2, ratio: -1500, metric: true, exact: false, note: null, other: null,
            tags: ["a", "b"], pair: [1, 2], opts: {unit: "c", deep: {x: [1, {y: false}]}}, line: "a\nbé"
        });
        expect(JSON.parse(pythonArgumentsJson("  city = 'Rome' , days=3 ")!)).toEqual({city: "Rome", days: 3});
        expect(pythonArgumentsJson("")).toBe("{}");
    });

    it("is not read where the notation is broken: the call is not a call", () => {
        for (const written of ["city='Paris", "city=Paris", "city=", "='x'", "'Paris'", "city='a' days=2", "city='a',,", "a=Nonesuch", "a=[1, 2", 'a={1: 2}', '"city": "Paris"'])
            expect(pythonArgumentsJson(written), written).toBeNull();
        // Nesting deeper than any argument needs is not read (and does not exhaust the stack).
        expect(pythonArgumentsJson("a=" + "[".repeat(5000) + "]".repeat(5000))).toBeNull();
        expect(pythonArgumentsJson("a=" + "[".repeat(5000))).toBeNull();
    });

    it("reads what its grammar lets a forced call write, and what llama.cpp reads: a key again (the last value), any key name, escapes it does not know", () => {
        expect(JSON.parse(pythonArgumentsJson("days=2, days=3")!)).toEqual({days: 3});
        expect(JSON.parse(pythonArgumentsJson('user-id="u1", a.b=1')!)).toEqual({"user-id": "u1", "a.b": 1});
        expect(JSON.parse(pythonArgumentsJson(String.raw`path="C:\users\me", x="\xZZ"`)!)).toEqual({path: String.raw`C:\users\me`, x: String.raw`\xZZ`});
    });

    it("a forced call's grammar writes each property by the name the schema declares (`user-id` too), each once or again, as the reader reads them", () => {
        const grammar = toolCallGrammarText({} as never, format, [{name: "get_time", schema: {type: "object",
            properties: {"user-id": {type: "string"}, n: {type: "integer"}, on: {type: "boolean"}}, required: ["user-id"]}}], false);
        expect(grammar).toContain('call ::= ( "get_time(" tool0-root ) ")"');
        expect(grammar).toContain('tool0-root ::= "user-id=" tool0-string ( ", " ( "n=" tool0-integer | "on=" ( "True" | "False" ) ) )*');
        expect(JSON.parse(pythonArgumentsJson('user-id="u", n=1, n=2, on=True')!)).toEqual({"user-id": "u", n: 2, on: true});
        // A name the reader cannot take back (`first name`) is not written.
        expect(toolCallGrammarText({} as never, format, [{name: "get_time", schema: {type: "object", properties: {"first name": {type: "string"}, n: {type: "integer"}}}}], false))
            .toContain('tool0-root ::= ( ( "n=" tool0-integer ) ( ", " ( "n=" tool0-integer ) )* )?');
    });

    it("keeps a number's digits as written (an id of 20 digits is not rounded)", () => {
        expect(pythonArgumentsJson("id=12345678901234567890, ratio=1.0, n=[7, 1e3]")).toBe('{"id":12345678901234567890,"ratio":1.0,"n":[7,1e3]}');
        // Python's own spellings that JSON has not are numbers still.
        expect(JSON.parse(pythonArgumentsJson("a=+5, b=.5, c=1.")!)).toEqual({a: 5, b: 0.5, c: 1});
    });

    it("calls in one list and in two, with text before: parsed and streamed alike, in any pieces", () => {
        const text = `Let me check. <|tool_call_start|>[get_weather(city="Paris (FR)", opts={"days": 2}), get_time(zone='CET')]<|tool_call_end|>`
            + ` <|tool_call_start|>[get_weather(city='Rome')]<|tool_call_end|>`;
        const parsed = parse(text)!;
        expect(parsed.content).toBe("Let me check.");
        const expected = [["get_weather", {city: "Paris (FR)", opts: {days: 2}}], ["get_time", {zone: "CET"}], ["get_weather", {city: "Rome"}]];
        expect(json(parsed.calls)).toEqual(expected);
        for (const hold of [true, false])
            for (const size of [1, 2, 3, 7, 40]) {
                const cuts = Array.from({length: Math.ceil(text.length / size)}, (_, index) => index * size).slice(1);
                const streamed = streamToolCalls(format, names, text, hold, cuts, read);
                expect(streamed.content, `${hold} ${size}`).toBe("Let me check.");
                expect(json(streamed.calls), `${hold} ${size}`).toEqual(expected);
            }
    });

    it("a call that is not one (unknown name, broken arguments) leaves the whole text content; after a good call, the rest is dropped", () => {
        for (const text of ["<|tool_call_start|>[get_news(topic='x')]<|tool_call_end|>", "Hi <|tool_call_start|>[get_weather(city=Paris)]<|tool_call_end|>"]) {
            expect(parse(text), text).toBeNull();
            expect(streamToolCalls(format, names, text, true, [5, 21, 30], read), text).toEqual({content: text, calls: []});
        }
        const text = "<|tool_call_start|>[get_weather(city='Oslo'), nonsense]<|tool_call_end|> and more";
        expect(json(parse(text)!.calls)).toEqual([["get_weather", {city: "Oslo"}]]);
        expect(json(streamToolCalls(format, names, text, true, [10, 33, 40], read).calls)).toEqual([["get_weather", {city: "Oslo"}]]);
    });

    it("a `]` or `}` that opens nothing ends the call as not one at once: the text streams on, not held to the end", () => {
        const events: string[] = [];
        const stream = new ToolCallStream(format, names, true, (event) => events.push(event.type === "content" ? event.text : event.type), read);
        stream.push("Sure <|tool_call_start|>[get_weather(city=]");
        expect(events.join("")).toBe("Sure <|tool_call_start|>[get_weather(city=]");
        stream.push(" more");
        stream.finish();
        expect(events.join("")).toBe("Sure <|tool_call_start|>[get_weather(city=] more");
    });

    it("a generation that stops after the list's `]` keeps its calls (the end marker not written)", () => {
        const text = "<|tool_call_start|>[get_weather(city='Oslo')]";
        expect(json(parse(text)!.calls)).toEqual([["get_weather", {city: "Oslo"}]]);
        expect(json(streamToolCalls(format, names, text, true, [12, 30], read).calls)).toEqual([["get_weather", {city: "Oslo"}]]);
    });

    it("a forced call cut short: the call with no arguments yet", () => {
        const parsed = parse("<|tool_call_start|>[get_weather(city='Os", true)!;
        expect(parsed.complete).toBe(false);
        expect(parsed.calls).toEqual([{name: "get_weather", arguments: "", cut: true}]);
    });

    it("a past call is written as LFM2.5's template writes it (its render_tool_calls macro)", () => {
        const template = new Template(fs.readFileSync(path.join(realTemplatesDir, "LFM2.5-8B-A1B.jinja"), "utf8"));
        const args = {city: "Paris", days: 3, metric: true, note: null, tags: ["a", "it's", 'say "hi"', "x\ny\\z"], opts: {unit: "c", n: [1, 2]}, ratio: 1.5};
        const calls = [{name: "get_weather", arguments: args}, {name: "get_time", arguments: {}}];
        const rendered = template.render({bos_token: "", messages: [{role: "user", content: "?"},
            {role: "assistant", content: "", tool_calls: calls.map((call) => ({type: "function", function: call}))}]});
        expect(rendered).toContain(pythonCallsText(calls) + "<|im_end|>");
        // And what it writes reads back into the same arguments.
        expect(json(parse(pythonCallsText(calls))!.calls)).toEqual([["get_weather", args], ["get_time", {}]]);
    });
});
