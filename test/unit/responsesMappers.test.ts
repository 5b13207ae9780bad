import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/core/http/ApiError.js";
import { customToolInput, toOfferedTools } from "../../src/capabilities/chat/responses/offeredTools.js";
import { encryptedContentOf, reasoningOfEncryptedContent, reasoningOfItem } from "../../src/capabilities/chat/responses/reasoningContent.js";
import { ResponseStore } from "../../src/capabilities/chat/responses/ResponseStore.js";
import type { ResponseCreateRequest, Tool } from "../../src/capabilities/chat/responses/ResponsesWire.js";
import { toChatRequest } from "../../src/capabilities/chat/responses/toChatRequest.js";
import { toResponsesError, toResponsesParam } from "../../src/capabilities/chat/responses/toResponsesError.js";
import { ContextLengthExceededError } from "../../src/capabilities/chat/errors/ContextLengthExceededError.js";
import { ResponseEvents } from "../../src/capabilities/chat/responses/ResponseEvents.js";
import type { OutputItem } from "../../src/capabilities/chat/responses/ResponsesWire.js";
import { toUsage, toResponse, type OutputOptions, type ResponseIds } from "../../src/capabilities/chat/responses/toResponse.js";
import type { ChoiceResult } from "../../src/capabilities/chat/ChatEngine.js";

const weather: Tool = {type: "function", name: "w", parameters: {type: "object"}};
const noTools = {tools: new Map(), encryptedReasoning: false, logprobs: false};

describe("Responses -> chat completions (pure)", () => {
    it("maps instructions, history, message items, function calls and their outputs, text.format and tools", () => {
        const {chat} = toChatRequest({
            model: "m", instructions: "Be brief.", max_output_tokens: 9, temperature: 0.2,
            input: [
                {role: "user", content: [{type: "input_text", text: "Weather?"}]},
                {type: "function_call", call_id: "c1", name: "w", arguments: "{\"city\":\"Oslo\"}"},
                {type: "function_call", call_id: "c2", name: "w", arguments: "{\"city\":\"Rome\"}"},
                {type: "function_call_output", call_id: "c1", output: "cold"},
                {type: "function_call_output", call_id: "c2", output: [{type: "input_text", text: "warm"}]},
                {type: "reasoning", summary: []}
            ],
            tools: [weather], tool_choice: "required", parallel_tool_calls: false,
            text: {format: {type: "json_schema", name: "out", schema: {type: "object"}, strict: true}}
        }, [{role: "user", content: "Earlier."}, {type: "message", role: "assistant", content: [{type: "output_text", text: "Yes."}]}]);
        expect(chat).toEqual({
            model: "m", max_completion_tokens: 9, temperature: 0.2,
            messages: [
                {role: "system", content: "Be brief."},
                {role: "user", content: "Earlier."},
                {role: "assistant", content: [{type: "text", text: "Yes."}]},
                {role: "user", content: [{type: "text", text: "Weather?"}]},
                {role: "assistant", content: null, tool_calls: [
                    {id: "c1", type: "function", function: {name: "w", arguments: "{\"city\":\"Oslo\"}"}},
                    {id: "c2", type: "function", function: {name: "w", arguments: "{\"city\":\"Rome\"}"}}
                ]},
                {role: "tool", tool_call_id: "c1", content: "cold"},
                {role: "tool", tool_call_id: "c2", content: [{type: "text", text: "warm"}]}
            ],
            response_format: {type: "json_schema", json_schema: {name: "out", schema: {type: "object"}, strict: true}},
            tools: [{type: "function", function: {name: "w", parameters: {type: "object"}}}],
            tool_choice: "required", parallel_tool_calls: false
        });
    });

    it("offers namespaced functions as namespace__name and custom tools as functions of one string `input`; additional_tools join", () => {
        const request: ResponseCreateRequest = {model: "m", input: [
            {type: "additional_tools", role: "developer", tools: [{type: "namespace", name: "clock", description: "Time tools.", tools: [
                {type: "function", name: "sleep", description: "Waits.", parameters: {type: "object", properties: {ms: {type: "number"}}}}
            ]}]},
            {role: "user", content: "hi"}
        ], tools: [
            weather,
            {type: "custom", name: "exec", description: "Runs code.", format: {type: "grammar", syntax: "lark", definition: "start: /.+/"}},
            {type: "namespace", name: "functions", description: "", tools: [{type: "custom", name: "apply", description: "Patches."}]}
        ]};
        const {chat, tools, fields} = toChatRequest(request);
        expect(chat.tools).toEqual([
            {type: "function", function: {name: "w", parameters: {type: "object"}}},
            {type: "function", function: {name: "exec", description: "Runs code.", parameters: {type: "object", required: ["input"], additionalProperties: false,
                properties: {input: {type: "string", description: "The tool's input, as text matching this lark grammar:\nstart: /.+/"}}}}},
            {type: "function", function: {name: "functions__apply", description: "Patches.", parameters: {type: "object", required: ["input"], additionalProperties: false,
                properties: {input: {type: "string", description: "The tool's input, as free text."}}}}},
            {type: "function", function: {name: "clock__sleep", description: "Time tools.\n\nWaits.", parameters: {type: "object", properties: {ms: {type: "number"}}}}}
        ]);
        expect(fields.tools).toEqual(["tools[0]", "tools[1]", "tools[2].tools[0]", "input[0].tools[0].tools[0]"]);
        expect(tools.byName.get("clock__sleep")).toEqual({kind: "function", name: "sleep", namespace: "clock"});
        expect(tools.byName.get("functions__apply")).toEqual({kind: "custom", name: "apply", namespace: "functions"});
        // The additional_tools item itself is no message.
        expect(chat.messages).toEqual([{role: "user", content: "hi"}]);
    });

    it("drops built-in tools with a warning each; refuses them only when tool_choice forces them", () => {
        const builtIns: Tool[] = [{type: "web_search", external_web_access: false} as Tool, {type: "file_search"}];
        const {chat, tools} = toChatRequest({model: "m", input: "x", tools: [...builtIns, weather]});
        expect(chat.tools?.map((tool) => (tool as {function: {name: string}}).function.name)).toEqual(["w"]);
        expect(tools.warnings).toEqual([
            {type: "unsupported_tool", param: "tools[0]", message: "The built-in tool 'web_search' is not available on this server; it was left out of the model's tools."},
            {type: "unsupported_tool", param: "tools[1]", message: "The built-in tool 'file_search' is not available on this server; it was left out of the model's tools."}
        ]);
        // Only built-in tools: no tools at all, and `required` cannot be met.
        expect(toChatRequest({model: "m", input: "x", tools: builtIns}).chat.tools).toBeUndefined();
        expect(() => toChatRequest({model: "m", input: "x", tools: builtIns, tool_choice: "required"}))
            .toThrow(expect.objectContaining({param: "tool_choice", message: expect.stringContaining("'web_search', 'file_search'")}));
        expect(() => toChatRequest({model: "m", input: "x", tools: [...builtIns, weather], tool_choice: {type: "web_search_preview"}}))
            .toThrow(expect.objectContaining({param: "tool_choice.type"}));
        expect(() => toChatRequest({model: "m", input: "x", tools: [{type: "shovel"}]})).toThrow(expect.objectContaining({param: "tools[0].type"}));
        expect(() => toChatRequest({model: "m", input: [{type: "additional_tools", tools: [{type: "shovel"}]}]})).toThrow(expect.objectContaining({param: "input[0].tools[0].type"}));
    });

    it("resolves tool_choice by a tool's own name, a namespaced one by its name when unique, and allowed_tools to the tools it lists", () => {
        const namespaced: Tool[] = [
            {type: "namespace", name: "a", description: "", tools: [{type: "function", name: "go"}, {type: "custom", name: "run"}]},
            {type: "namespace", name: "b", description: "", tools: [{type: "function", name: "go"}]}
        ];
        const choice = (tool_choice: ResponseCreateRequest["tool_choice"]) => toOfferedTools({model: "m", input: "x", tools: [...namespaced, weather], tool_choice}, [], []);
        expect(choice({type: "custom", name: "run"}).choice).toEqual({type: "function", function: {name: "a__run"}});
        expect(choice({type: "function", name: "b__go"}).choice).toEqual({type: "function", function: {name: "b__go"}});
        expect(() => choice({type: "function", name: "go"})).toThrow(expect.objectContaining({param: "tool_choice.name", message: expect.stringContaining("'a__go' or 'b__go'")}));
        expect(() => choice({type: "function", name: "run"})).toThrow(expect.objectContaining({param: "tool_choice.name"}));
        const allowed = choice({type: "allowed_tools", mode: "required", tools: [{type: "function", name: "w"}, {type: "custom", name: "run"}, {type: "web_search"}]});
        expect(allowed.choice).toBe("required");
        expect(allowed.tools.map((tool) => tool.function.name)).toEqual(["a__run", "w"]);
        expect(allowed.sources).toEqual(["tools[0].tools[1]", "tools[2]"]);
    });

    it("sends calls back under the model's names (custom input as {input}) and restores reasoning onto the assistant message after it", () => {
        const {chat, fields} = toChatRequest({model: "m", input: [
            {role: "user", content: "go"},
            {type: "reasoning", id: "rs_1", summary: [{type: "summary_text", text: "summary"}], content: [{type: "reasoning_text", text: "I will run it."}], status: "completed"},
            {type: "custom_tool_call", id: "ctc_1", call_id: "c1", name: "exec", namespace: "functions", input: "ls -la", status: "completed"},
            {type: "function_call", call_id: "c2", name: "sleep", namespace: "clock", arguments: "{}"},
            {type: "custom_tool_call_output", call_id: "c1", output: "a b c"},
            {type: "function_call_output", call_id: "c2", output: "slept"},
            {type: "reasoning", id: "rs_2", summary: [], encrypted_content: encryptedContentOf("Done, say so.")},
            {type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{type: "output_text", text: "Done.", annotations: [], logprobs: []}]}
        ]});
        expect(chat.messages.slice(1)).toEqual([
            {role: "assistant", content: null, reasoning_content: "I will run it.", tool_calls: [
                {id: "c1", type: "function", function: {name: "functions__exec", arguments: "{\"input\":\"ls -la\"}"}},
                {id: "c2", type: "function", function: {name: "clock__sleep", arguments: "{}"}}
            ]},
            {role: "tool", tool_call_id: "c1", content: "a b c"},
            {role: "tool", tool_call_id: "c2", content: "slept"},
            {role: "assistant", content: [{type: "text", text: "Done."}], reasoning_content: "Done, say so."}
        ]);
        expect(fields.messages.map((source) => source.param)).toEqual(["input[0]", "input[2]", "input[4]", "input[5]", "input[7]"]);
        expect(fields.messages[1].calls).toEqual([{param: "input[2]", arguments: "input"}, {param: "input[3]", arguments: "arguments"}]);
    });

    it("refuses a call without its output, an output without its call, and what it does not have", () => {
        expect(() => toChatRequest({model: "m", input: [{role: "user", content: "x"}, {type: "function_call", call_id: "c9", name: "w", arguments: "{}"}]}))
            .toThrow(expect.objectContaining({param: "input[1]", message: expect.stringContaining("c9")}));
        expect(() => toChatRequest({model: "m", input: [{type: "custom_tool_call_output", call_id: "c9", output: "x"}]}))
            .toThrow(expect.objectContaining({param: "input[0].call_id"}));
        expect(() => toChatRequest({model: "m", input: "x", background: true} as ResponseCreateRequest)).toThrow(expect.objectContaining({param: "background"}));
        expect(() => toChatRequest({model: "m", input: "x", truncation: "auto"} as ResponseCreateRequest)).toThrow(expect.objectContaining({param: "truncation"}));
    });

    it("asks for logprobs with include message.output_text.logprobs or top_logprobs", () => {
        expect(toChatRequest({model: "m", input: "x", include: ["message.output_text.logprobs"]}).chat).toMatchObject({logprobs: true, top_logprobs: 0});
        expect(toChatRequest({model: "m", input: "x", top_logprobs: 3}).chat).toMatchObject({logprobs: true, top_logprobs: 3});
        expect(toChatRequest({model: "m", input: "x", include: ["reasoning.encrypted_content"]}).chat.logprobs).toBeUndefined();
    });
});

describe("errors of the chat path in the Responses request's words", () => {
    const {fields} = toChatRequest({model: "m", instructions: "sys", tools: [weather, {type: "namespace", name: "ns", description: "", tools: [{type: "custom", name: "c"}]}], input: [
        {role: "user", content: [{type: "input_text", text: "a"}, {type: "input_image"}]},
        {type: "function_call", call_id: "c1", name: "w", arguments: "{"},
        {type: "custom_tool_call", call_id: "c2", name: "c", namespace: "ns", input: "x"},
        {type: "function_call_output", call_id: "c1", output: "o"},
        {type: "custom_tool_call_output", call_id: "c2", output: [{type: "input_file"}]}
    ]});

    it("names the item and field the client sent", () => {
        expect(toResponsesParam("messages[0]", fields)).toBe("instructions");
        expect(toResponsesParam("messages[1].content[1].type", fields)).toBe("input[0].content[1].type");
        expect(toResponsesParam("messages[2].tool_calls[0].function.arguments", fields)).toBe("input[1].arguments");
        expect(toResponsesParam("messages[2].tool_calls[1].function.arguments", fields)).toBe("input[2].input");
        expect(toResponsesParam("messages[2].tool_calls[1].id", fields)).toBe("input[2].call_id");
        expect(toResponsesParam("messages[2].tool_calls", fields)).toBe("input[1]");
        expect(toResponsesParam("messages[3].tool_call_id", fields)).toBe("input[3].call_id");
        expect(toResponsesParam("messages[4].content[0].type", fields)).toBe("input[4].output[0].type");
        expect(toResponsesParam("messages[4].role", fields)).toBe("input[4].type");
        expect(toResponsesParam("tools[1].function.parameters.properties", fields)).toBe("tools[1].tools[0].parameters.properties");
        expect(toResponsesParam("tools[0].function.name", fields)).toBe("tools[0].name");
        expect(toResponsesParam("response_format.json_schema.schema.properties.a", fields)).toBe("text.format.schema.properties.a");
        expect(toResponsesParam("max_completion_tokens", fields)).toBe("max_output_tokens");
        expect(toResponsesParam("reasoning_effort", fields)).toBe("reasoning.effort");
        expect(toResponsesParam("messages", fields)).toBe("input");
        expect(toResponsesParam("tool_choice", fields)).toBe("tool_choice");
    });

    it("renames the param and the fields quoted in the message; leaves other errors alone", () => {
        const error = toResponsesError(ApiError.invalidRequest("Invalid 'messages[2].tool_calls[0].function.arguments': not valid JSON.", "messages[2].tool_calls[0].function.arguments"), fields) as ApiError;
        expect(error).toMatchObject({status: 400, param: "input[1].arguments", message: "Invalid 'input[1].arguments': not valid JSON."});
        const json = toResponsesError(ApiError.invalidRequest("'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.", "messages"), fields) as ApiError;
        expect(json.message).toBe("'input' must contain the word 'json' in some form, to use 'text.format' of type 'json_object'.");
        // The context's overflow, in the input's words (found by a user trial: it said "your messages").
        const overflow = toResponsesError(ApiError.invalidRequest(new ContextLengthExceededError(4096, 6013).message, "messages", "context_length_exceeded"), fields) as ApiError;
        expect(overflow).toMatchObject({param: "input", message: "This model's maximum context length is 4096 tokens. However, your input resulted in 6013 tokens. Please reduce the length of the input."});
        const plain = new Error("boom");
        expect(toResponsesError(plain, fields)).toBe(plain);
    });
});

describe("reasoning sent back: encrypted_content", () => {
    it("is this server's reasoning text in base64, read back; another server's value is not ours", () => {
        const value = encryptedContentOf("Let me think. ✓");
        expect(Buffer.from(value, "base64").toString("utf8")).toContain("Let me think. ✓");
        expect(reasoningOfEncryptedContent(value)).toBe("Let me think. ✓");
        expect(reasoningOfEncryptedContent("gAAAAABo-opaque-openai-value")).toBeNull();
        // content first, then this server's encrypted_content, then the summary.
        expect(reasoningOfItem({type: "reasoning", summary: [{type: "summary_text", text: "s"}], content: [{type: "reasoning_text", text: "c"}], encrypted_content: value})).toBe("c");
        expect(reasoningOfItem({type: "reasoning", summary: [{type: "summary_text", text: "s"}], encrypted_content: value})).toBe("Let me think. ✓");
        expect(reasoningOfItem({type: "reasoning", summary: [{type: "summary_text", text: "s"}], encrypted_content: "gAAAA"})).toBe("s");
        expect(reasoningOfItem({type: "reasoning", summary: []})).toBeNull();
    });
});

describe("the response object and the store", () => {
    const ids = {response: "resp_1", message: "msg_1", reasoning: "rs_1", call: (index: number, kind: string) => ({id: `${kind === "custom" ? "ctc" : "fc"}_${index}`, callId: `call_${index}`})};
    /** A choice's output items: the converter run without a writer over the events an engine gives for the choice, folded. */
    const toOutputItems = (ids: ResponseIds, choice: ChoiceResult, options: OutputOptions): OutputItem[] => {
        const events = new ResponseEvents(toResponse("resp_1", 1, "m", {model: "m", input: "x"}, {status: "in_progress", output: [], usage: null}), ids, options, () => {});
        events.start();
        if (choice.reasoning != null)
            events.reasoningDelta(choice.reasoning);
        events.textDelta(choice.text, choice.logprobs);
        for (const [index, call] of (choice.toolCalls ?? []).entries()) {
            events.toolCall({type: "call", index, name: call.name});
            events.toolCall({type: "arguments", index, fragment: call.arguments});
        }
        return events.finish({promptTokens: 1, completionTokens: choice.completionTokens, choices: [choice]}, () => {}).output;
    };

    it("gives message and function_call items; length is incomplete", () => {
        expect(toOutputItems(ids, {index: 0, text: "", finishReason: "tool_calls", completionTokens: 3, toolCalls: [{name: "w", arguments: "{}"}]}, noTools))
            .toEqual([{type: "function_call", id: "fc_0", call_id: "call_0", name: "w", arguments: "{}", status: "completed"}]);
        const response = toResponse("resp_1", 1, "m", {model: "m", input: "x", max_output_tokens: 2}, {status: "incomplete", output: [], usage: null});
        // A thinking model's reasoning comes first as a reasoning item; its tokens in usage.
        const thought = {index: 0, text: "Hi.", finishReason: "stop" as const, completionTokens: 9, reasoning: "They greet me.", reasoningTokens: 6};
        expect(toOutputItems(ids, thought, noTools).map((item) => item.type)).toEqual(["reasoning", "message"]);
        expect(toOutputItems(ids, thought, noTools)[0]).toEqual({type: "reasoning", id: "rs_1", summary: [{type: "summary_text", text: "They greet me."}], content: [{type: "reasoning_text", text: "They greet me."}], status: "completed"});
        expect(toUsage(5, thought)).toEqual({input_tokens: 5, input_tokens_details: {cached_tokens: 0, cache_write_tokens: 0}, output_tokens: 9, output_tokens_details: {reasoning_tokens: 6}, total_tokens: 14});
        expect(response).toMatchObject({status: "incomplete", incomplete_details: {reason: "max_output_tokens"}, store: true, max_output_tokens: 2, tool_choice: "auto"});
        expect(response).not.toHaveProperty("warnings");
    });

    it("gives namespaced calls their namespace, custom tools custom_tool_call items, encrypted_content and logprobs when asked", () => {
        const options = {
            tools: new Map([["clock__sleep", {kind: "function" as const, name: "sleep", namespace: "clock"}], ["functions__exec", {kind: "custom" as const, name: "exec", namespace: "functions"}]]),
            encryptedReasoning: true, logprobs: true
        };
        const items = toOutputItems(ids, {index: 0, text: "Ok", finishReason: "tool_calls", completionTokens: 9, reasoning: "Plan.",
            logprobs: [{token: "Ok", logprob: -0.5, bytes: [79, 107], topLogprobs: [{token: "No", logprob: -1, bytes: [78, 111]}]}],
            toolCalls: [{name: "clock__sleep", arguments: "{\"ms\":1}"}, {name: "functions__exec", arguments: "{\"input\":\"echo hi\"}"}]}, options);
        expect(items).toEqual([
            {type: "reasoning", id: "rs_1", summary: [{type: "summary_text", text: "Plan."}], content: [{type: "reasoning_text", text: "Plan."}], encrypted_content: encryptedContentOf("Plan."), status: "completed"},
            {type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{type: "output_text", text: "Ok", annotations: [],
                logprobs: [{token: "Ok", logprob: -0.5, bytes: [79, 107], top_logprobs: [{token: "No", logprob: -1, bytes: [78, 111]}]}]}]},
            {type: "function_call", id: "fc_0", call_id: "call_0", name: "sleep", namespace: "clock", arguments: "{\"ms\":1}", status: "completed"},
            {type: "custom_tool_call", id: "ctc_1", call_id: "call_1", name: "exec", namespace: "functions", input: "echo hi", status: "completed"}
        ]);
        expect(customToolInput("{\"input\": \"cut sh")).toBe("{\"input\": \"cut sh");
        expect(toOutputItems(ids, {index: 0, text: "x", finishReason: "stop", completionTokens: 1}, noTools)[0]).toMatchObject({content: [{logprobs: []}]});
    });

    it("keeps responses per owner, evicts the oldest past its bounds, and continues a conversation from history, input and output", () => {
        const store = new ResponseStore({maxResponses: 2, maxBytes: 1_000_000});
        const output = [{type: "message" as const, id: "msg", status: "completed" as const, role: "assistant" as const, content: [{type: "output_text" as const, text: "answer", annotations: [] as [], logprobs: []}]}];
        const response = (id: string) => toResponse(id, 1, "m", {model: "m", input: "x"}, {status: "completed", usage: null, output});
        for (const id of ["resp_a", "resp_b", "resp_c"])
            store.put({response: response(id), input: [{role: "user", content: "question", id: "item_1"}], previous: null, owner: "alice"});
        expect(store.get("resp_a", "alice")).toBeUndefined();
        expect(store.get("resp_b", "bob")).toBeUndefined();
        expect(ResponseStore.conversationOf(store.get("resp_c", "alice")!)).toEqual([{role: "user", content: "question", id: "item_1"}, ...output]);
        expect(store.delete("resp_c", "bob")).toBe(false);
        expect(store.delete("resp_c", "alice")).toBe(true);
    });
});
