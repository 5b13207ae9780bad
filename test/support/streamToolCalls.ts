import { expect } from "vitest";
import type { ToolCallFormat } from "../../src/capabilities/chat/ChatEngine.js";
import type { ArgumentsReader } from "../../src/capabilities/chat/llama/parseToolCalls.js";
import { ToolCallStream } from "../../src/capabilities/chat/llama/ToolCallStream.js";

/** Streams `text` through a ToolCallStream in pieces cut at `cuts` and collects what comes out (content, calls). */
export function streamToolCalls(format: ToolCallFormat, names: ReadonlySet<string>, text: string, hold: boolean, cuts: number[], read?: ArgumentsReader) {
    let content = "";
    const calls: {name: string, arguments: string}[] = [];
    const parser = new ToolCallStream(format, names, hold, (event) => {
        if (event.type === "content")
            content += event.text;
        else if (event.type === "call") {
            expect(event.index).toBe(calls.length);
            calls.push({name: event.name, arguments: ""});
        } else {
            expect(event.fragment).not.toBe("");
            calls[event.index].arguments += event.fragment;
        }
    }, read);
    let at = 0;
    for (const cut of [...cuts, text.length]) {
        parser.push(text.slice(at, cut));
        at = cut;
    }
    parser.finish();
    return {content, calls};
}
