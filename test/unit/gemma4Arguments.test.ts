import { describe, expect, it } from "vitest";
import { gemma4ArgumentsJson } from "../../src/capabilities/chat/llama/gemma4Arguments.js";
import { parseToolCalls } from "../../src/capabilities/chat/llama/parseToolCalls.js";
import { gemma4CallFormat } from "../../src/capabilities/chat/llama/gemma4Arguments.js";
import { argumentsReader } from "../../src/capabilities/chat/llama/parseToolCalls.js";
import { ToolCallStream } from "../../src/capabilities/chat/llama/ToolCallStream.js";

// Gemma 4 writes a call's arguments in its own notation (its template's format_argument): `<|"|>` around strings, bare
// keys, lists and maps; llama.cpp's gemma4 parser reads them into JSON, and so does the server.
describe("Gemma 4's argument notation", () => {
    it("reads strings, numbers, booleans, null, lists and maps into JSON", () => {
        const written = 'city:<|"|>Paris, "the capital"<|"|>,days:2,ratio:-1.5e3,metric:true,note:null,tags:[<|"|>a<|"|>,<|"|>b<|"|>],opts:{unit:<|"|>c<|"|>,deep:{x:[1,{y:false}]}}';
        expect(JSON.parse(gemma4ArgumentsJson(written)!)).toEqual({
            city: 'Paris, "the capital"', days: 2, ratio: -1500, metric: true, note: null, tags: ["a", "b"], opts: {unit: "c", deep: {x: [1, {y: false}]}}
        });
        // Whitespace where llama.cpp allows it, quoted keys, nothing at all.
        expect(JSON.parse(gemma4ArgumentsJson(' city: <|"|>Rome<|"|> , days : 3 ')!)).toEqual({city: "Rome", days: 3});
        expect(JSON.parse(gemma4ArgumentsJson('<|"|>city<|"|>:<|"|>Oslo<|"|>')!)).toEqual({city: "Oslo"});
        expect(gemma4ArgumentsJson("")).toBe("{}");
    });

    it("is not read where the notation is broken: the call is not a call", () => {
        for (const written of ['city:<|"|>Paris', "city:Paris", "city:", ":1", "a:1,", "a:[1,2", 'a:1}b:2', '"city": "Paris"'])
            expect(gemma4ArgumentsJson(written), written).toBeNull();
        // Nesting deeper than any argument needs is not read (and does not exhaust the stack).
        expect(gemma4ArgumentsJson("a:" + "[".repeat(5000) + "]".repeat(5000))).toBeNull();
        expect(JSON.parse(gemma4ArgumentsJson("a:" + "[".repeat(60) + "]".repeat(60))!)).toHaveProperty("a");
    });

    it("a whole call in Gemma 4's format parses, streamed and not, to the same JSON arguments", () => {
        const names = new Set(["get_weather"]);
        const read = argumentsReader(gemma4CallFormat, [{name: "get_weather", parameters: {type: "object"}}]);
        const text = 'Let me check.<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,opts:{days:2}}<tool_call|><|tool_call>call:get_weather{city:<|"|>Rome<|"|>}<tool_call|>';
        const parsed = parseToolCalls(text, gemma4CallFormat, names, false, read)!;
        expect(parsed.content).toBe("Let me check.");
        expect(parsed.calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([["get_weather", {city: "Paris", opts: {days: 2}}], ["get_weather", {city: "Rome"}]]);
        for (const hold of [true, false]) {
            const events: {type: string, fragment?: string, name?: string, text?: string}[] = [];
            const stream = new ToolCallStream(gemma4CallFormat, names, hold, (event) => events.push(event as never), read);
            for (let at = 0; at < text.length; at += 3)
                stream.push(text.slice(at, at + 3));
            stream.finish();
            const fragments = [0, 1].map((index) => events.filter((event) => event.type === "arguments" && (event as {index?: number}).index === index).map((event) => event.fragment).join(""));
            expect(fragments.map((fragment) => JSON.parse(fragment))).toEqual([{city: "Paris", opts: {days: 2}}, {city: "Rome"}]);
        }
    });
});
