import { describe, expect, it } from "vitest";
import type { ToolCallFormat } from "../../src/capabilities/chat/ChatEngine.js";
import { argumentsFromMarkup, deriveParameterMarkup, parameterProbe, valueKind } from "../../src/capabilities/chat/llama/parameterMarkup.js";
import { argumentsReader, parseToolCalls } from "../../src/capabilities/chat/llama/parseToolCalls.js";
import { streamToolCalls } from "../support/streamToolCalls.js";

// Calls whose arguments the template writes one by one in markup (Qwen3-Coder's, GLM's): the format read from the
// template's renderings of a probe call, the arguments read back into the JSON object a client gets, the same
// streamed and not.

const {name, keys, values} = parameterProbe;
/** What Qwen3-Coder's template renders for the probe call after a user turn, with and without arguments. */
const coderCall = (args: [string, string][]) => `<tool_call>\n<function=${name}>\n`
    + args.map(([key, value]) => `<parameter=${key}>\n${value}\n</parameter>\n`).join("") + "</function>\n</tool_call>";
const coderTwo = `<|im_start|>system\n<tools><name>${name}</name></tools><|im_end|>\n<|im_start|>assistant\n`
    + coderCall([[keys[0], values[0]], [keys[1], values[1]]]) + "<|im_end|>\n";
const coderNone = `<|im_start|>assistant\n${coderCall([])}<|im_end|>\n`;
// node-llama-cpp's detection: the text before the name, and after the (one, `params`) value.
const coderDetected = {prefix: "<tool_call>\n<function=", suffix: "\n</parameter>\n</function>\n</tool_call>"};

const glmCall = (args: [string, string][]) => `<tool_call>${name}` + args.map(([key, value]) => `\n<arg_key>${key}</arg_key>\n<arg_value>${value}</arg_value>`).join("") + "\n</tool_call>";

describe("the markup of a template's calls, from its renderings", () => {
    it("Qwen3-Coder's <parameter=KEY>", () => {
        const derived = deriveParameterMarkup(coderTwo, coderNone, coderDetected.prefix, coderDetected.suffix)!;
        expect(derived).toEqual({nameEnd: ">\n<", callEnd: "/function>\n</tool_call>", markup: {keyStart: "parameter=", keyEnd: ">\n", valueEnd: "\n</parameter>\n<"}});
        // Put together again, the pieces are the template's text.
        const {nameEnd, callEnd, markup} = derived;
        expect(coderDetected.prefix + name + nameEnd + markup.keyStart + keys[0] + markup.keyEnd + values[0] + markup.valueEnd + callEnd)
            .toBe(coderCall([[keys[0], values[0]]]));
    });

    it("GLM's <arg_key>/<arg_value>", () => {
        const derived = deriveParameterMarkup("<|user|>probe<|assistant|>" + glmCall([[keys[0], values[0]], [keys[1], values[1]]]),
            "<|assistant|>" + glmCall([]), "<tool_call>", "</arg_value>\n</tool_call>");
        expect(derived).toEqual({nameEnd: "\n<", callEnd: "/tool_call>", markup: {keyStart: "arg_key>", keyEnd: "</arg_key>\n<arg_value>", valueEnd: "</arg_value>\n<"}});
    });

    it("none for renderings of another shape: quoted values, or a call without arguments written otherwise", () => {
        const quoted = `[${name}(${keys[0]}='${values[0]}', ${keys[1]}='${values[1]}')]`;
        expect(deriveParameterMarkup(quoted, `[${name}()]`, "[", "')]")).toBeNull();
        expect(deriveParameterMarkup(coderTwo, "<tool_call>\n<function=" + name + "/>", coderDetected.prefix, coderDetected.suffix)).toBeNull();
        expect(deriveParameterMarkup("no call here", coderNone, coderDetected.prefix, coderDetected.suffix)).toBeNull();
    });
});

const coder: ToolCallFormat = {
    prefix: "<tool_call>\n<function=", paramsPrefix: ">\n<", suffix: "/function>\n</tool_call>", betweenCalls: "\n",
    parameters: {keyStart: "parameter=", keyEnd: ">\n", valueEnd: "\n</parameter>\n<"}
};
const functions = [
    {name: "get_weather", parameters: {type: "object", properties: {city: {type: "string"}, days: {type: "integer"}, code: {type: "string"}, opts: {type: "object"}}}},
    {name: "get_time", parameters: {type: "object", properties: {zone: {type: "string"}}}}
];
const read = argumentsReader(coder, functions);
const names = new Set(functions.map((fn) => fn.name));
const call = (fn: string, args: [string, string][]) => `<tool_call>\n<function=${fn}>\n`
    + args.map(([key, value]) => `<parameter=${key}>\n${value}\n</parameter>\n`).join("") + "</function>\n</tool_call>";

describe("arguments in markup, read into JSON", () => {
    it("types each value by the function's schema", () => {
        expect(argumentsFromMarkup("parameter=city>\nParis\n</parameter>\n<parameter=days>\n2\n</parameter>\n<parameter=code>\n007\n</parameter>\n<parameter=opts>\n{\"unit\": \"c\"}\n</parameter>\n<",
            coder.parameters!, functions[0].parameters)).toBe('{"city":"Paris","days":2,"code":"007","opts":{"unit":"c"}}');
        // Not in the schema: JSON where it parses (Jinja's `string` filter writes Python's True), else the text.
        expect(argumentsFromMarkup("parameter=flag>\nTrue\n</parameter>\n<parameter=n>\n1.5\n</parameter>\n<parameter=note>\nhi there\n</parameter>\n<",
            coder.parameters!, undefined)).toBe('{"flag":true,"n":1.5,"note":"hi there"}');
        expect(argumentsFromMarkup("", coder.parameters!, undefined)).toBe("{}");
    });

    it("a value keeps its lines and markup-like text up to the value's end", () => {
        const code = "if (a < b) {\n  return \"<x>\";\n}";
        expect(JSON.parse(argumentsFromMarkup(`parameter=code>\n${code}\n</parameter>\n<`, coder.parameters!, functions[0].parameters)!)).toEqual({code});
    });

    it("not markup: null; cut short: the pairs written whole", () => {
        expect(argumentsFromMarkup("{\"city\": \"Paris\"}", coder.parameters!, undefined)).toBeNull();
        expect(argumentsFromMarkup("parameter=city>\nParis", coder.parameters!, undefined)).toBeNull();
        expect(argumentsFromMarkup("parameter=city>\nParis\n</parameter>\n<parameter=days>\n2", coder.parameters!, functions[0].parameters, true)).toBe('{"city":"Paris"}');
    });
});

describe("what real models write beside the template's exact markup", () => {
    const glm = {keyStart: "arg_key>", keyEnd: "</arg_key>\n<arg_value>", valueEnd: "</arg_value>\n<"};
    const dsml = {keyStart: "｜DSML｜parameter name=\"", keyEnd: "\" string=\"true\">", valueEnd: "</｜DSML｜parameter>\n<"};
    it.each([
        ["no line break before </parameter>", "parameter=city>\nParis</parameter>\n<parameter=days>\n2\n</parameter>\n<", coder.parameters!],
        ["no line break after <parameter=...>", "parameter=city>Paris\n</parameter>\n<parameter=days>\n2\n</parameter>\n<", coder.parameters!],
        ["Windows line ends", "parameter=city>\r\nParis\r\n</parameter>\r\n<parameter=days>\r\n2\r\n</parameter>\r\n<", coder.parameters!],
        ["GLM's tags without the line between", "arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key>\n<arg_value>2</arg_value>\n<", glm]
    ])("%s: read as written", (_name, body, markup) => {
        expect(JSON.parse(argumentsFromMarkup(body, markup, functions[0].parameters)!)).toEqual({city: "Paris", days: 2});
    });

    it("a value keeps its indentation and its last line break: only one line break next to it is the markup's", () => {
        // As Qwen3-Coder's template renders Claude Code's Edit and Write calls (llama.cpp's parser takes them as exactly).
        const body = "parameter=old_string>\n    return a\n</parameter>\n<parameter=new_string>\n    return b\n\n</parameter>\n<"
            + "parameter=content>\n\n\ndef f():\n    pass\n\n</parameter>\n<";
        expect(JSON.parse(argumentsFromMarkup(body, coder.parameters!, undefined)!)).toEqual({
            old_string: "    return a", new_string: "    return b\n", content: "\n\ndef f():\n    pass\n"
        });
    });

    it("markup inside a value (an XML file's <parameter> lines) does not end it", () => {
        const xml = "<sql id=\"q\">\n  <parameter>id</parameter>\n  <parameter>name</parameter>\n</sql>";
        const text = call("get_weather", [["city", xml]]);
        expect(JSON.parse(parseToolCalls(text, coder, names, false, read)!.calls[0].arguments)).toEqual({city: xml});
    });

    it("a first call without its opener (Qwen3-Coder's `<function=`) is read; a mention of the markup in text is text, and the call after it is read", () => {
        const short: ToolCallFormat = {...coder, firstStart: "<function="};
        const body = "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>";
        for (const [text, content] of [
            [body, ""],
            ["Let me call it.\n" + body, "Let me call it."],
            ["To call a tool, write <function=NAME> in XML.\n<tool_call>\n" + body, "To call a tool, write <function=NAME> in XML."],
            ["Use <function=nope> or <function=" + "x".repeat(300) + "\n<tool_call>\n" + body, "Use <function=nope> or <function=" + "x".repeat(300)]
        ] as const) {
            const expected = {content, calls: [{name: "get_weather", arguments: '{"city":"Paris"}'}]};
            expect(parseToolCalls(text, short, names, false, read), text).toEqual({...expected, complete: true});
            for (const size of [1, 3, 7, 1000])
                expect(streamToolCalls(short, names, text, true, Array.from({length: Math.ceil(text.length / size)}, (_, index) => index * size).slice(1), read), `${size}: ${text}`)
                    .toEqual(expected);
        }
    });

    it("a name ended by a line break alone (Ling's format) is read", () => {
        const ling: ToolCallFormat = {prefix: "<tool_call>", paramsPrefix: "\n", suffix: "\n</tool_call>", betweenCalls: "\n",
            parameters: {keyStart: "<arg_key>", keyEnd: "</arg_key>\n<arg_value>", valueEnd: "</arg_value>"}};
        for (const written of ["get_weather", " get_weather"])
            expect(parseToolCalls(`<tool_call>${written}\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>`, ling, names, false, argumentsReader(ling, functions)))
                .toEqual({content: "", calls: [{name: "get_weather", arguments: '{"city":"Paris"}'}], complete: true});
    });

    it("GLM's value tags have no line break of their own: the value keeps its line breaks", () => {
        const glm = {keyStart: "arg_key>", keyEnd: "</arg_key>\n<arg_value>", valueEnd: "</arg_value>\n<"};
        expect(JSON.parse(argumentsFromMarkup("arg_key>content</arg_key>\n<arg_value>\ndef f():\n    pass\n</arg_value>\n<", glm, undefined)!))
            .toEqual({content: "\ndef f():\n    pass\n"});
    });

    it("a forced call cut in its closing tags keeps its last pair; a value end followed by other text is the value's", () => {
        const start = "parameter=path>\na.txt\n</parameter>\n<";
        for (const tail of ["/funct", "/function>\n</tool", "para", "", "parameter=con"])
            expect(argumentsFromMarkup(start + tail, coder.parameters!, undefined, true, coder.suffix)).toBe('{"path":"a.txt"}');
        // Cut inside a value that holds a value end of its own: that pair was not written whole.
        expect(argumentsFromMarkup(start + "parameter=content>\n<a>\n</parameter>\n<b>more", coder.parameters!, undefined, true, coder.suffix))
            .toBe('{"path":"a.txt"}');
        expect(JSON.parse(argumentsFromMarkup("parameter=a>\nx\n</parameter>\n<\n\n</parameter>\n<parameter=b>\n2\n</parameter>\n<", coder.parameters!, undefined)!))
            .toEqual({a: "x\n</parameter>\n<\n", b: 2});
    });

    it("many value ends inside a value cost their number, not their square", () => {
        const inner = "<p>x</parameter>\n<q>\n".repeat(20_000);
        expect(JSON.parse(argumentsFromMarkup(`parameter=a>\n${inner}\n</parameter>\n<`, coder.parameters!, undefined)!)).toEqual({a: inner});
    });

    it("a long run of blank lines costs its length, not its square (the whitespace is walked over, not backtracked)", () => {
        // 200,000 blank lines then a value's end: a pattern with \s* around its tags took seconds; this is one pass.
        const blank = "\n".repeat(200_000);
        const text = call("get_weather", [["city", "Paris" + blank]]);
        expect(JSON.parse(parseToolCalls(text, coder, names, false, read)!.calls[0].arguments)).toEqual({city: "Paris" + blank});
    });

    it("a call written with the wrong markup is not read into a key of markup", () => {
        // DeepSeek-V3.2's markup for a value that is not a string differs (string="false"): not this format, not a call.
        expect(argumentsFromMarkup("｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n<", dsml, undefined)).toBeNull();
    });

    it("a call's end without the line breaks", () => {
        expect(parseToolCalls("<tool_call>\n<function=get_time>\n<parameter=zone>\nUTC</parameter></function></tool_call>", coder, names, false, read))
            .toEqual({content: "", calls: [{name: "get_time", arguments: '{"zone":"UTC"}'}], complete: true});
    });
});

describe("a value's type, as the schema allows it", () => {
    const kinds = {
        text: {type: "string"}, enumText: {enum: ["c", "f"]}, number: {type: "integer"},
        nullableText: {type: ["string", "null"]}, optionalText: {anyOf: [{type: "string"}, {type: "null"}]}, textOrNumber: {oneOf: [{type: "string"}, {type: "number"}]}
    };
    it("text, JSON, or (a string or something else) a literal of the other type, else the text", () => {
        expect(Object.fromEntries(Object.entries(kinds).map(([key, schema]) => [key, valueKind(schema)]))).toEqual({
            text: "text", enumText: "text", number: "json", nullableText: "mixed", optionalText: "mixed", textOrNumber: "mixed"
        });
        const read = (value: string, key: keyof typeof kinds) => JSON.parse(argumentsFromMarkup(`parameter=${key}>\n${value}\n</parameter>\n<`,
            coder.parameters!, {type: "object", properties: kinds})!)[key];
        expect([read("hello", "nullableText"), read("null", "nullableText"), read("None", "nullableText")]).toEqual(["hello", null, null]);
        expect([read("12345", "optionalText"), read("1.10", "optionalText"), read("true", "text")]).toEqual(["12345", "1.10", "true"]);
        expect([read("1.5", "textOrNumber"), read("c", "enumText"), read("7", "number")]).toEqual([1.5, "c", 7]);
    });
});

/** Streams `text` in pieces cut at `cuts` and collects what comes out. */
function stream(text: string, hold: boolean, cuts: number[]) {
    return streamToolCalls(coder, names, text, hold, cuts, read);
}

const texts: [string, string, boolean][] = [
    ["one call", call("get_weather", [["city", "Paris"], ["days", "2"]]), false],
    ["content then two calls", "Let me check.\n" + call("get_weather", [["city", "Paris"]]) + "\n" + call("get_time", [["zone", "UTC"]]), false],
    ["a call without arguments", call("get_time", []), false],
    ["JSON arguments are not this format's: all content", "<tool_call>\n<function=get_time>\n{\"zone\": \"UTC\"}\n</function>\n</tool_call>", false],
    ["unknown function: all content", call("nope", [["a", "b"]]), false],
    ["unfinished call (auto): content", "a\n<tool_call>\n<function=get_time>\n<parameter=zone>\nUT", false],
    ["forced call cut in a value keeps the pairs before it", call("get_weather", [["city", "Paris"]]).replace("</function>\n</tool_call>", "<parameter=days>\n2"), true],
    ["forced call cut in its name", "<tool_call>\n<function=get_we", true]
];

describe("parseToolCalls and ToolCallStream agree on arguments in markup", () => {
    it.each(texts)("%s", (_name, text, truncated) => {
        const whole = parseToolCalls(text, coder, names, truncated, read);
        const expected = whole == null || whole.calls.length === 0 ? {content: whole?.content ?? text, calls: []}
            : {content: whole.content, calls: whole.calls.map(({name: fn, arguments: args}) => ({name: fn, arguments: args}))};
        for (let seed = 1; seed <= 3; seed++) {
            const cuts = seed === 1 ? [] : seed === 2 ? Array.from({length: text.length}, (_, i) => i) : [Math.floor(text.length / 2)];
            expect(stream(text, !truncated, cuts)).toEqual(expected);
        }
    });

    it("parses a call's arguments into the JSON object a client gets", () => {
        expect(parseToolCalls("Let me check.\n" + call("get_weather", [["city", "Paris"], ["days", "2"]]), coder, names, false, read)).toEqual({
            content: "Let me check.", calls: [{name: "get_weather", arguments: '{"city":"Paris","days":2}'}], complete: true
        });
        expect(parseToolCalls(call("get_weather", [["city", "Paris"]]).replace("</function>\n</tool_call>", "<parameter=days>\n2"), coder, names, true, read)).toEqual({
            content: "", calls: [{name: "get_weather", arguments: '{"city":"Paris"}', cut: true}], complete: false
        });
    });
});
