import { expect, it } from "vitest";
import type { TestServer } from "./startTestServer.js";
import { callOf, weatherQuestion as messages, weatherTools as tools } from "./weatherTool.js";

/**
 * What a model scripted to answer the weather question with one call in its own format gets checked for through the
 * `openai` client: the call comes back as tool_calls with its JSON arguments (content null, finish_reason tool_calls,
 * and the thought as reasoning where `reasoning` says), streamed alike, and with tool_choice required (the grammar of the
 * format writes it: each of `parallel`, with the request fields `forced` adds).
 */
export function itReadsTheScriptedCall(server: () => TestServer, model: string, expected: [string, unknown][],
    {reasoning, parallel = [false], forced = {}}: {reasoning?: string, parallel?: boolean[], forced?: Record<string, unknown>} = {}) {
    it("a call comes back as tool_calls with its JSON arguments", async () => {
        const completion = await server().client.chat.completions.create({model, temperature: 0, max_tokens: 64, tools, messages});
        const [choice] = completion.choices;
        expect(choice.finish_reason).toBe("tool_calls");
        expect(choice.message.content).toBeNull();
        if (reasoning != null)
            expect((choice.message as {reasoning_content?: string}).reasoning_content).toBe(reasoning);
        expect(choice.message.tool_calls!.map(callOf)).toEqual(expected);
    });

    it("streamed: the deltas fold into the same call", async () => {
        const completion = await server().client.chat.completions.stream({model, temperature: 0, max_tokens: 64, tools, messages}).finalChatCompletion();
        expect(completion.choices[0].finish_reason).toBe("tool_calls");
        expect(completion.choices[0].message.content).toBeNull();
        expect(completion.choices[0].message.tool_calls!.map(callOf)).toEqual(expected);
    });

    it.each(parallel)("tool_choice required: the grammar holds the model to its format, and the call parses (parallel_tool_calls %s)", async (parallelCalls) => {
        const completion = await server().client.chat.completions.create({model, temperature: 0, max_tokens: 64, tools, messages,
            tool_choice: "required", parallel_tool_calls: parallelCalls, ...forced});
        const [choice] = completion.choices;
        expect(choice.finish_reason).toBe("tool_calls");
        expect(choice.message.tool_calls!.map(callOf)).toEqual(expected);
    });
}

/**
 * The follow-up to the scripted call (its answer, then the call's result "Sunny, 24 C"), and its prompt as /v1/tokenize
 * renders it (with `tools`): the tokens, and their pieces joined without spaces (the test vocabulary's SentencePiece
 * tokenizer puts a word-start space after each control token).
 */
export async function followUpPrompt(server: TestServer, model: string) {
    const first = await server.client.chat.completions.create({model, temperature: 0, max_tokens: 64, tools, messages});
    const call = first.choices[0].message.tool_calls![0];
    const followUp = [...messages, first.choices[0].message, {role: "tool" as const, tool_call_id: call.id, content: "Sunny, 24 C"}];
    const response = await server.post("/v1/tokenize", {model, messages: followUp, tools, with_pieces: true});
    expect(response.status).toBe(200);
    const {tokens} = await response.json() as {tokens: {id: number, piece: string}[]};
    return {followUp, tokens, text: tokens.map((token) => token.piece).join("").replaceAll(" ", "")};
}
