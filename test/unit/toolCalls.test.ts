import { describe, expect, it } from "vitest";
import type { ToolCallFormat } from "../../src/capabilities/chat/ChatEngine.js";
import { parseToolCalls } from "../../src/capabilities/chat/llama/parseToolCalls.js";
import { gbnfLiteral, renameRules } from "../../src/capabilities/chat/llama/toolCallGrammar.js";
import { streamToolCalls } from "../support/streamToolCalls.js";

const hermes: ToolCallFormat = {prefix: "<tool_call>\n{\"name\": \"", paramsPrefix: "\", \"arguments\": ", suffix: "}\n</tool_call>", betweenCalls: "\n"};
const names = new Set(["get_weather", "get_time"]);
const call = (name: string, args: string) => `<tool_call>\n{"name": "${name}", "arguments": ${args}}\n</tool_call>`;

/** Streams `text` in pieces cut at `cuts` and collects what comes out. */
function stream(text: string, hold: boolean, cuts: number[]) {
    return streamToolCalls(hermes, names, text, hold, cuts);
}

function randomCuts(length: number, seed: number) {
    const cuts: number[] = [];
    let state = seed;
    for (let at = 0; at < length;) {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        at += 1 + (state % 7);
        if (at < length) cuts.push(at);
    }
    return cuts;
}

const texts: [string, string, boolean][] = [
    ["plain text", "Hello there, no calls here.  ", false],
    ["text that looks like the start of a call", "See <tool_ca", false],
    ["one call", call("get_weather", "{\"city\": \"Paris\"}"), false],
    ["content then two calls", "Let me check.\n" + call("get_weather", "{\"city\": \"Paris\"}") + "\n" + call("get_time", "{ \"zone\": \"UTC\" }"), false],
    ["text after the calls is dropped", call("get_time", "{}") + "\nand then some", false],
    ["malformed first call: all content", "x " + call("get_weather", "{\"city\": ") + " tail", false],
    ["unknown function: all content", call("nope", "{}"), false],
    ["a malformed second call is dropped", call("get_time", "{}") + "\n" + call("get_time", "[1]"), false],
    ["unfinished call (auto): content", "a\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zo", false],
    ["forced call cut short keeps its arguments so far", "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"U", true],
    ["forced call cut in the suffix", "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</to", true],
    ["forced call cut in the name", call("get_time", "{}") + "\n<tool_call>\n{\"name\": \"get_", true],
    ["forced call cut in its prefix: no markup in the content", "<tool_call>\n{\"name", true],
    ["forced call cut in its prefix after text", "Sure.\n<tool_call>\n{", true],
    // Reka-Edge's model (llama.cpp's tests/test-chat.cpp) closes the call without the template's line break; others add spaces.
    ["a call closed without the template's line break, another with more", "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"UTC\"}}</tool_call>\n"
        + "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}} \n\n </tool_call>", false]
];

describe("parseToolCalls and ToolCallStream agree", () => {
    it.each(texts)("%s", (_name, text, truncated) => {
        const whole = parseToolCalls(text, hermes, names, truncated);
        // (The stream's calls are names and arguments; whether the last one was cut is the whole text's to say.)
        const expected = whole == null || whole.calls.length === 0 ? {content: whole?.content ?? text, calls: []}
            : {content: whole.content, calls: whole.calls.map(({name, arguments: args}) => ({name, arguments: args}))};
        for (let seed = 1; seed <= 30; seed++) {
            const cuts = seed === 1 ? [] : seed === 2 ? Array.from({length: text.length}, (_, i) => i) : randomCuts(text.length, seed);
            // Forced (truncated) calls stream their fragments live, auto holds each call until it is complete.
            expect(stream(text, !truncated, cuts)).toEqual(expected);
        }
    });

    it("parses content, calls and arguments as generated", () => {
        expect(parseToolCalls("Let me check.\n" + call("get_weather", "{\"city\": \"Paris\"}"), hermes, names)).toEqual({
            content: "Let me check.", calls: [{name: "get_weather", arguments: "{\"city\": \"Paris\"}"}], complete: true
        });
        expect(parseToolCalls("no call", hermes, names)).toBeNull();
        // Cut by max_tokens inside the prefix of a forced call: its start is not the answer's text.
        expect(parseToolCalls("<tool_call>\n{\"name", hermes, names, true)).toEqual({content: "", calls: [], complete: false});
        // A forced call cut in its arguments is marked; one cut before its name is not a call at all.
        expect(parseToolCalls(call("get_time", "{}") + "\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"ci", hermes, names, true)).toEqual({
            content: "", calls: [{name: "get_time", arguments: "{}"}, {name: "get_weather", arguments: "{\"ci", cut: true}], complete: false
        });
        expect(parseToolCalls(call("get_time", "{}") + "\n<tool_call>\n{\"name\": \"get_", hermes, names, true)).toEqual({
            content: "", calls: [{name: "get_time", arguments: "{}"}], complete: false
        });
        expect(parseToolCalls("See <tool_ca", hermes, names)).toBeNull();
        expect(parseToolCalls(texts.at(-1)![1], hermes, names)?.calls).toEqual([{name: "get_time", arguments: "{\"zone\": \"UTC\"}"}, {name: "get_weather", arguments: "{}"}]);
    });
});

describe("tool-call grammar pieces", () => {
    it("renames rule names but not literals, classes or counts", () => {
        expect(renameRules('root ::= "{" ws value [a-z]{0,15} "root"\nws ::= [ \\t]', "t0-"))
            .toBe('t0-root ::= "{" t0-ws t0-value [a-z]{0,15} "root"\nt0-ws ::= [ \\t]');
        expect(gbnfLiteral("a\"b\\c\nd")).toBe('"a\\"b\\\\c\\nd"');
    });
});
