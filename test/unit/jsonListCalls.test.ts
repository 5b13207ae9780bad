import { describe, expect, it } from "vitest";
import { jsonListCallFormat } from "../../src/capabilities/chat/llama/jsonListCalls.js";
import { kimiCallFormat } from "../../src/capabilities/chat/llama/kimiCalls.js";
import { parseToolCalls } from "../../src/capabilities/chat/llama/parseToolCalls.js";
import { streamToolCalls } from "../support/streamToolCalls.js";

// Calls as a JSON list between two markers, as llama.cpp's tests (tests/test-chat.cpp) have Nemotron-Nano-v2 and Apriel
// write them: `<TOOLCALL>[{"name": "special_function", "arguments": {"arg1": 1}}]</TOOLCALL>`. node-llama-cpp took the
// first `}` for the call's end (inside the arguments): the calls were text.
const nemotron = jsonListCallFormat("... '<TOOLCALL>[' ... ']</TOOLCALL>' ...")!;
const apriel = jsonListCallFormat("... '\\n<tool_calls>[' ... ']</tool_calls>' ...")!;
const names = new Set(["special_function", "get_time"]);
const json = (calls: {name: string, arguments: string}[]) => calls.map((call) => [call.name, JSON.parse(call.arguments)]);

describe("calls as a JSON list", () => {
    const cases: [string, typeof nemotron, string, [string, unknown][]][] = [
        ["Nemotron-Nano-v2's, as llama.cpp's test has it", nemotron, '<TOOLCALL>[{"name": "special_function", "arguments": {"arg1": 1}}]</TOOLCALL>', [["special_function", {arg1: 1}]]],
        ["two calls, nested braces and brackets in strings, compact JSON", nemotron,
            'Let me look. <TOOLCALL>[{"name":"get_time","arguments":{"zone":"} ] {","opts":{"deep":[1,{"x":"]"}]}}}, {"name": "special_function", "arguments": {}}]</TOOLCALL>',
            [["get_time", {zone: "} ] {", opts: {deep: [1, {x: "]"}]}}], ["special_function", {}]]],
        ["Apriel's, with the id its template writes after the arguments", apriel,
            '<tool_calls>[{"name": "special_function", "arguments": {"arg1": 1}, "id": "000000001"}, {"name": "get_time", "arguments": {"zone": "UTC"}}]</tool_calls>',
            [["special_function", {arg1: 1}], ["get_time", {zone: "UTC"}]]]
    ];
    it.each(cases)("%s: parsed and streamed alike, in any pieces", (_name, format, text, expected) => {
        const parsed = parseToolCalls(text, format, names)!;
        expect(json(parsed.calls)).toEqual(expected);
        for (const hold of [true, false])
            for (const size of [1, 2, 5, 13, 200]) {
                const cuts = Array.from({length: Math.ceil(text.length / size)}, (_, index) => index * size).slice(1);
                const streamed = streamToolCalls(format, names, text, hold, cuts);
                expect(streamed.content, `${hold} ${size}`).toBe(parsed.content);
                expect(json(streamed.calls), `${hold} ${size}`).toEqual(expected);
            }
    });

    it("an unknown name or arguments that are not an object: the whole text is content", () => {
        for (const text of ['<TOOLCALL>[{"name": "nope", "arguments": {}}]</TOOLCALL>', '<TOOLCALL>[{"name": "get_time", "arguments": [1]}]</TOOLCALL>']) {
            expect(parseToolCalls(text, nemotron, names), text).toBeNull();
            expect(streamToolCalls(nemotron, names, text, true, [7, 20, 33]), text).toEqual({content: text, calls: []});
        }
    });
});

// Kimi-K2's calls in one section, one after another with no separator, each `functions.NAME:IDX` (llama.cpp's tests).
describe("Kimi-K2's calls", () => {
    it("two calls in a section, the index after each name read as the call's id, not its name: parsed and streamed alike", () => {
        const text = 'Let me look.<|tool_calls_section_begin|><|tool_call_begin|>functions.special_function:0<|tool_call_argument_begin|>{"arg1": 1}<|tool_call_end|>'
            + '<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{"zone": "} <|tool_call_end|>"}<|tool_call_end|><|tool_calls_section_end|>';
        const expected = [["special_function", {arg1: 1}], ["get_time", {zone: "} <|tool_call_end|>"}]];
        const parsed = parseToolCalls(text, kimiCallFormat, names)!;
        expect(parsed.content).toBe("Let me look.");
        expect(json(parsed.calls)).toEqual(expected);
        for (const hold of [true, false])
            for (const size of [1, 3, 8, 300]) {
                const cuts = Array.from({length: Math.ceil(text.length / size)}, (_, index) => index * size).slice(1);
                const streamed = streamToolCalls(kimiCallFormat, names, text, hold, cuts);
                expect(streamed.content, `${hold} ${size}`).toBe("Let me look.");
                expect(json(streamed.calls), `${hold} ${size}`).toEqual(expected);
            }
    });
});
