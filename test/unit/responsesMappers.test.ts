import { describe, expect, it } from "vitest";
import { ResponseStore } from "../../src/capabilities/chat/responses/ResponseStore.js";
import { toChatRequest } from "../../src/capabilities/chat/responses/toChatRequest.js";
import { toUsage, toOutputItems, toResponse } from "../../src/capabilities/chat/responses/toResponse.js";

describe("Responses -> chat completions (pure)", () => {
    it("maps instructions, history, message items, function calls and their outputs, text.format and tools", () => {
        const request = toChatRequest({
            model: "m", instructions: "Be brief.", max_output_tokens: 9, temperature: 0.2,
            input: [
                {role: "user", content: [{type: "input_text", text: "Weather?"}]},
                {type: "function_call", call_id: "c1", name: "w", arguments: "{\"city\":\"Oslo\"}"},
                {type: "function_call", call_id: "c2", name: "w", arguments: "{\"city\":\"Rome\"}"},
                {type: "function_call_output", call_id: "c1", output: "cold"},
                {type: "function_call_output", call_id: "c2", output: "warm"},
                {type: "reasoning", summary: []}
            ],
            tools: [{type: "function", name: "w", parameters: {type: "object"}}], tool_choice: "required", parallel_tool_calls: false,
            text: {format: {type: "json_schema", name: "out", schema: {type: "object"}, strict: true}}
        }, [{role: "user", content: "Earlier."}, {type: "message", role: "assistant", content: [{type: "output_text", text: "Yes."}]}]);
        expect(request).toEqual({
            model: "m", max_completion_tokens: 9, temperature: 0.2,
            messages: [
                {role: "system", content: "Be brief."},
                {role: "user", content: "Earlier."},
                {role: "assistant", content: "Yes."},
                {role: "user", content: "Weather?"},
                {role: "assistant", content: null, tool_calls: [
                    {id: "c1", type: "function", function: {name: "w", arguments: "{\"city\":\"Oslo\"}"}},
                    {id: "c2", type: "function", function: {name: "w", arguments: "{\"city\":\"Rome\"}"}}
                ]},
                {role: "tool", tool_call_id: "c1", content: "cold"},
                {role: "tool", tool_call_id: "c2", content: "warm"}
            ],
            response_format: {type: "json_schema", json_schema: {name: "out", schema: {type: "object"}, strict: true}},
            tools: [{type: "function", function: {name: "w", description: undefined, parameters: {type: "object"}}}],
            tool_choice: "required", parallel_tool_calls: false
        });
    });

    it("refuses built-in tools by name and items missing their fields", () => {
        expect(() => toChatRequest({model: "m", input: "x", tools: [{type: "file_search"}]})).toThrow(expect.objectContaining({param: "tools[0].type"}));
        expect(() => toChatRequest({model: "m", input: [{type: "function_call_output", call_id: "c"} as never]})).toThrow(expect.objectContaining({param: "input[0].output"}));
    });
});

describe("the response object and the store", () => {
    const ids = {response: "resp_1", message: "msg_1", reasoning: "rs_1", call: (index: number) => ({id: `fc_${index}`, callId: `call_${index}`})};

    it("gives message and function_call items; length is incomplete", () => {
        expect(toOutputItems(ids, {index: 0, text: "", finishReason: "tool_calls", completionTokens: 3, toolCalls: [{name: "w", arguments: "{}"}]}))
            .toEqual([{type: "function_call", id: "fc_0", call_id: "call_0", name: "w", arguments: "{}", status: "completed"}]);
        const response = toResponse("resp_1", 1, "m", {model: "m", input: "x", max_output_tokens: 2}, {status: "incomplete", output: [], usage: null});
        // A thinking model's reasoning comes first as a reasoning item; its tokens in usage.
        const thought = {index: 0, text: "Hi.", finishReason: "stop" as const, completionTokens: 9, reasoning: "They greet me.", reasoningTokens: 6};
        expect(toOutputItems(ids, thought).map((item) => item.type)).toEqual(["reasoning", "message"]);
        expect(toOutputItems(ids, thought)[0]).toEqual({type: "reasoning", id: "rs_1", summary: [{type: "summary_text", text: "They greet me."}], content: [{type: "reasoning_text", text: "They greet me."}], status: "completed"});
        expect(toUsage(5, thought).output_tokens_details).toEqual({reasoning_tokens: 6});
        expect(response).toMatchObject({status: "incomplete", incomplete_details: {reason: "max_output_tokens"}, store: true, max_output_tokens: 2, tool_choice: "auto"});
    });

    it("keeps responses per owner, evicts the oldest past its bounds, and continues a conversation from history, input and output", () => {
        const store = new ResponseStore({maxResponses: 2, maxBytes: 1_000_000});
        const response = (id: string) => toResponse(id, 1, "m", {model: "m", input: "x"}, {status: "completed", usage: null,
            output: [{type: "message", id: "msg", status: "completed", role: "assistant", content: [{type: "output_text", text: "answer", annotations: []}]}]});
        for (const id of ["resp_a", "resp_b", "resp_c"])
            store.put({response: response(id), input: [{role: "user", content: "question", id: "item_1"}], history: [], owner: "alice"});
        expect(store.get("resp_a", "alice")).toBeUndefined();
        expect(store.get("resp_b", "bob")).toBeUndefined();
        expect(ResponseStore.conversationOf(store.get("resp_c", "alice")!)).toEqual([
            {role: "user", content: "question", id: "item_1"},
            {type: "message", role: "assistant", content: [{type: "output_text", text: "answer", annotations: []}]}
        ]);
        expect(store.delete("resp_c", "bob")).toBe(false);
        expect(store.delete("resp_c", "alice")).toBe(true);
    });
});
