import fs from "node:fs";
import path from "node:path";
import { Template } from "@huggingface/jinja";
import { describe, expect, it } from "vitest";
import { argumentsReader, parseToolCalls } from "../../src/capabilities/chat/llama/parseToolCalls.js";
import { pythonArgumentsJson, pythonCallsText, pythonListCallFormat } from "../../src/capabilities/chat/llama/pythonCalls.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
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
        for (const written of ["city='Paris", "city=Paris", "city=", "='x'", "'Paris'", "city='a' days=2", "city='a',,", "a=1, a=2", "a=Nonesuch", "a=[1, 2", 'a={1: 2}', '"city": "Paris"'])
            expect(pythonArgumentsJson(written), written).toBeNull();
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
        const args = {city: "Paris", days: 3, metric: true, note: null, tags: ["a", "b"], opts: {unit: "c", n: [1, 2]}, ratio: 1.5};
        const calls = [{name: "get_weather", arguments: args}, {name: "get_time", arguments: {}}];
        const rendered = template.render({bos_token: "", messages: [{role: "user", content: "?"},
            {role: "assistant", content: "", tool_calls: calls.map((call) => ({type: "function", function: call}))}]});
        expect(rendered).toContain(pythonCallsText(calls) + "<|im_end|>");
        // And what it writes reads back into the same arguments.
        expect(json(parse(pythonCallsText(calls))!.calls)).toEqual([["get_weather", args], ["get_time", {}]]);
    });
});
