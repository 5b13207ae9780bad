import { describe, expect, it } from "vitest";
import { ClientFields } from "../../src/capabilities/chat/messages/ClientFields.js";
import { compileMessagesValidator } from "../../src/capabilities/chat/messages/compileMessagesValidator.js";
import type { MessageCreateRequest } from "../../src/capabilities/chat/messages/MessagesWire.js";
import { countTokensSchema, messagesSchema } from "../../src/capabilities/chat/messages/messagesSchema.js";
import { toAnthropicError } from "../../src/capabilities/chat/messages/toAnthropicError.js";
import { toChatRequest } from "../../src/capabilities/chat/messages/toChatRequest.js";
import { promptUsage, toStopReason, toUsage } from "../../src/capabilities/chat/messages/messageFields.js";
import { thinkingDisplay, toReasoning } from "../../src/capabilities/chat/messages/toReasoning.js";
import { ContextLengthExceededError } from "../../src/capabilities/chat/errors/ContextLengthExceededError.js";
import { ApiError } from "../../src/core/http/ApiError.js";
import { toApiError } from "../../src/server/toApiError.js";

const user = (content: MessageCreateRequest["messages"][number]["content"]) => ({role: "user" as const, content: content as string});

describe("toChatRequest (Messages -> chat completions, pure)", () => {
    it("maps system, merges same-role turns, tool_use into tool_calls and tool_result into tool messages", () => {
        const {chat} = toChatRequest({
            model: "m", max_tokens: 10, system: [{type: "text", text: "Be brief."}, {type: "text", text: "Be kind."}],
            messages: [
                {role: "user", content: "Hi"},
                {role: "user", content: [{type: "text", text: "Weather?"}]},
                {role: "assistant", content: [{type: "text", text: "Let me look."}, {type: "tool_use", id: "toolu_1", name: "w", input: {city: "Oslo"}}]},
                {role: "user", content: [{type: "tool_result", tool_use_id: "toolu_1", content: [{type: "text", text: "cold"}]}, {type: "text", text: "Thanks"}]}
            ],
            stop_sequences: ["END"], temperature: 0.5, top_p: 0.9, metadata: {user_id: "u1"},
            tools: [{name: "w", input_schema: {type: "object"}}], tool_choice: {type: "any", disable_parallel_tool_use: true}
        });
        expect(chat).toEqual({
            model: "m", max_tokens: 10, stop: ["END"], temperature: 0.5, top_p: 0.9, user: "u1",
            messages: [
                {role: "system", content: "Be brief.\n\nBe kind."},
                {role: "user", content: "Hi\n\nWeather?"},
                {role: "assistant", content: "Let me look.", tool_calls: [{id: "toolu_1", type: "function", function: {name: "w", arguments: "{\"city\":\"Oslo\"}"}}]},
                {role: "tool", tool_call_id: "toolu_1", content: "cold"},
                {role: "user", content: "Thanks"}
            ],
            tools: [{type: "function", function: {name: "w", description: undefined, parameters: {type: "object"}}}],
            tool_choice: "required", parallel_tool_calls: false
        });
    });

    it("system messages anywhere join the system prompt in order; an empty one (only output_config) is dropped; its effort is read", () => {
        const {chat, effort} = toChatRequest({
            model: "m", max_tokens: 10, system: "Top.",
            messages: [
                user("Hi"),
                {role: "system", content: [{type: "text", text: "Environment: linux."}]},
                {role: "system", output_config: {effort: "low"}},
                {role: "system", content: ""},
                user("More"),
                {role: "assistant", content: "Ok"},
                {role: "system", content: "Agents: none."}
            ]
        });
        expect(chat.messages).toEqual([
            {role: "system", content: "Top.\n\nEnvironment: linux.\n\nAgents: none."},
            // The user turns around the system messages are one turn, as consecutive user turns are.
            {role: "user", content: "Hi\n\nMore"},
            {role: "assistant", content: "Ok"}
        ]);
        expect(effort).toBe("low");
        // Claude Code's billing header (Anthropic's metadata, different with every prompt) does not reach the model.
        const billed = toChatRequest({model: "m", max_tokens: 10, messages: [user("Hi")], system: [
            {type: "text", text: "x-anthropic-billing-header: cc_version=2.1.332.573; cc_entrypoint=sdk-cli;"}, {type: "text", text: "You are an agent."}
        ]});
        expect(billed.chat.messages[0]).toEqual({role: "system", content: "You are an agent."});
        // Without a top-level system the first system message is where the system prompt comes from (for errors).
        const alone = toChatRequest({model: "m", max_tokens: 10, messages: [user("Hi"), {role: "system", content: "Late."}]});
        expect(alone.chat.messages[0]).toEqual({role: "system", content: "Late."});
        expect(alone.fields.of("messages[0].content")).toBe("messages.1.content");
        expect(alone.effort).toBeNull();
        // clear_at next_user_message: shown until a user turn follows it.
        const clearing = (later: boolean) => toChatRequest({model: "m", max_tokens: 10, messages: [
            user("Hi"), {role: "system", content: "Only now.", clear_at: "next_user_message"}, ...(later ? [{role: "assistant" as const, content: "Ok"}, user("Next")] : [])
        ]}).chat.messages[0];
        expect(clearing(false)).toEqual({role: "system", content: "Only now."});
        expect(clearing(true)).toEqual({role: "user", content: "Hi"});
    });

    it("a defer_loading tool is offered once a tool_reference names it (or tool_choice forces it)", () => {
        const tools = [{name: "ToolSearch", input_schema: {type: "object"}}, {name: "WebFetch", input_schema: {type: "object"}, defer_loading: true}, {name: "Cron", input_schema: {type: "object"}, defer_loading: true}];
        const names = (request: ReturnType<typeof toChatRequest>) => (request.chat.tools as {function: {name: string}}[]).map((tool) => tool.function.name);
        expect(names(toChatRequest({model: "m", max_tokens: 10, tools, messages: [user("Hi")]}))).toEqual(["ToolSearch"]);
        const searched = toChatRequest({model: "m", max_tokens: 10, tools, messages: [
            user("Fetch it"),
            {role: "assistant", content: [{type: "tool_use", id: "t1", name: "ToolSearch", input: {query: "select:WebFetch"}}]},
            {role: "user", content: [{type: "tool_result", tool_use_id: "t1", content: [{type: "tool_reference", tool_name: "WebFetch"}]}]}
        ]});
        expect(names(searched)).toEqual(["ToolSearch", "WebFetch"]);
        expect(searched.chat.messages.at(-1)).toEqual({role: "tool", tool_call_id: "t1", content: "Tool loaded: WebFetch"});
        // Chat tool 1 is the client's tools[1]; with Cron forced, the client's tools[2] is chat tool 1.
        expect(searched.fields.of("tools[1].function.parameters.properties")).toBe("tools.1.input_schema.properties");
        const forced = toChatRequest({model: "m", max_tokens: 10, tools, tool_choice: {type: "tool", name: "Cron"}, messages: [user("Hi")]});
        expect(names(forced)).toEqual(["ToolSearch", "Cron"]);
        expect(forced.fields.of("tools[1].function.name")).toBe("tools.2.name");
    });

    it("tool_use and tool_result must pair up, told as Anthropic tells it", () => {
        const base = {model: "m", max_tokens: 5};
        const use = {role: "assistant" as const, content: [{type: "tool_use" as const, id: "toolu_1", name: "w", input: {}}]};
        expect(() => toChatRequest({...base, messages: [user("x"), use, user("no result")]})).toThrow(expect.objectContaining({
            param: "messages.1",
            message: "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
        }));
        expect(() => toChatRequest({...base, messages: [user("x"), {role: "assistant", content: "hm"}, user([{type: "text", text: "a"}, {type: "tool_result", tool_use_id: "toolu_9", content: "r"}])]}))
            .toThrow(expect.objectContaining({param: "messages.2.content.1", message: expect.stringMatching(/^messages\.2\.content\.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9\./)}));
        expect(() => toChatRequest({...base, messages: [user([{type: "tool_use", id: "a", name: "w", input: {}}])]}))
            .toThrow(expect.objectContaining({param: "messages.0.content.0", message: "messages.0.content.0: `tool_use` blocks can only be in `assistant` messages"}));
        // A last assistant turn with calls (nothing after it yet) is not checked.
        expect(() => toChatRequest({...base, messages: [user("x"), use]})).not.toThrow();
    });

    it("a turn's thinking blocks become its reasoning_content, with calls or without (the template decides where it shows)", () => {
        const base = {model: "m", max_tokens: 5};
        const thinking = (text: string) => ({type: "thinking" as const, thinking: text, signature: "s"});
        const {chat} = toChatRequest({...base, messages: [
            user("x"), {role: "assistant", content: [thinking("Just greet."), {type: "text", text: "Hi."}]}, user("Weather?"),
            {role: "assistant", content: [thinking("Need the weather."), {type: "tool_use", id: "toolu_1", name: "w", input: {}}]},
            user([{type: "tool_result", tool_use_id: "toolu_1", content: "sunny"}])
        ]});
        const assistants = chat.messages.filter((message) => message.role === "assistant") as {reasoning_content?: string, content: unknown}[];
        expect(assistants.map((message) => message.reasoning_content ?? null)).toEqual(["Just greet.", "Need the weather."]);
    });

    it("tool_choice tool names a function; none is none; a tool not in tools, and a thinking budget not below max_tokens, are 400s naming the field", () => {
        const base = {model: "m", max_tokens: 5, messages: [user("x")], tools: [{name: "w", input_schema: {type: "object"}}]};
        expect(toChatRequest({...base, tool_choice: {type: "tool", name: "w"}}).chat.tool_choice).toEqual({type: "function", function: {name: "w"}});
        expect(toChatRequest({...base, tool_choice: {type: "none"}}).chat.tool_choice).toBe("none");
        expect(() => toChatRequest({...base, tool_choice: {type: "tool", name: "nope"}})).toThrow(expect.objectContaining({param: "tool_choice.name"}));
        expect(() => toChatRequest({...base, max_tokens: 1024, thinking: {type: "enabled", budget_tokens: 1024}})).toThrow(expect.objectContaining({param: "thinking.budget_tokens"}));
        expect(() => toChatRequest({...base, max_tokens: 1025, thinking: {type: "enabled", budget_tokens: 1024}})).not.toThrow();
    });
});

describe("toReasoning: every thinking form Anthropic documents", () => {
    it("enabled: its budget; adaptive and between_tools: thinking without a budget; disabled: off; absent: the model's default; effort reaches the template", () => {
        expect(toReasoning(undefined)).toBeNull();
        expect(toReasoning({type: "enabled", budget_tokens: 1024})).toEqual({enabled: true, budgetTokens: 1024});
        expect(toReasoning({type: "enabled", budget_tokens: 2048, display: "omitted"})).toEqual({enabled: true, budgetTokens: 2048});
        expect(toReasoning({type: "adaptive"})).toEqual({enabled: true, budgetTokens: null});
        expect(toReasoning({type: "adaptive", display: "updates"}, "high")).toEqual({enabled: true, budgetTokens: null, effort: "high"});
        expect(toReasoning({type: "between_tools"})).toEqual({enabled: true, budgetTokens: null});
        expect(toReasoning({type: "disabled"}, "max")).toEqual({enabled: false, budgetTokens: null});
        expect(toReasoning(undefined, "low")).toEqual({enabled: true, budgetTokens: null, effort: "low"});
    });

    it("display: omitted keeps the text out; summarized, updates and none return it", () => {
        expect(thinkingDisplay({type: "adaptive", display: "omitted"})).toBe("omitted");
        expect(thinkingDisplay({type: "enabled", budget_tokens: 10, display: "omitted"})).toBe("omitted");
        for (const thinking of [{type: "adaptive", display: "updates"}, {type: "adaptive", display: "summarized"}, {type: "adaptive", display: null}, {type: "disabled"}, undefined] as const)
            expect(thinkingDisplay(thinking)).toBe("returned");
    });
});

describe("the request schema, in Anthropic's words", () => {
    const validate = compileMessagesValidator(messagesSchema);
    const counting = compileMessagesValidator(countTokensSchema);
    const base = {model: "m", max_tokens: 10, messages: [{role: "user", content: "hi"}]};
    const refusal = (body: unknown, check = validate) => {
        try {
            check(body);
        } catch (error) {
            return {param: (error as ApiError).param, message: (error as ApiError).message};
        }
        throw new Error("accepted");
    };

    it("accepts each thinking form Claude Code and the SDK send, and system messages anywhere", () => {
        for (const thinking of [
            {type: "enabled", budget_tokens: 5}, {type: "enabled", budget_tokens: 5, display: "summarized"}, {type: "adaptive"},
            {type: "adaptive", display: "omitted"}, {type: "adaptive", display: "updates"}, {type: "adaptive", display: null}, {type: "disabled"}, {type: "between_tools"}
        ])
            expect(() => validate({...base, thinking})).not.toThrow();
        const messages = [{role: "user", content: "hi"}, {role: "system", content: [{type: "text", text: "env", cache_control: {type: "ephemeral"}}]}, {role: "system", output_config: {effort: "high"}}];
        expect(() => validate({...base, messages})).not.toThrow();
        expect(() => counting({model: "m", messages})).not.toThrow();
    });

    it("a wrong thinking value names the field that is wrong", () => {
        expect(refusal({...base, thinking: {type: "enabled"}})).toEqual({param: "thinking.budget_tokens", message: "thinking.budget_tokens: Field required"});
        expect(refusal({...base, thinking: {type: "enabled", budget_tokens: 1.5}})).toEqual({param: "thinking.budget_tokens", message: "thinking.budget_tokens: Input should be a valid integer"});
        expect(refusal({...base, thinking: {type: "adaptive", display: "full"}})).toEqual({param: "thinking.display", message: "thinking.display: Input should be 'summarized', 'omitted' or 'updates'"});
        expect(refusal({...base, thinking: {type: "sometimes"}})).toEqual({param: "thinking.type",
            message: "thinking.type: Input tag 'sometimes' found using 'type' does not match any of the expected tags: 'enabled', 'adaptive', 'disabled', 'between_tools'"});
        expect(refusal({...base, thinking: {budget_tokens: 100}})).toEqual({param: "thinking.type", message: "thinking.type: Field required"});
        expect(refusal({...base, thinking: true})).toEqual({param: "thinking", message: "thinking: Input should be a valid dictionary"});
    });

    it("other fields: paths with dots, pydantic's phrases", () => {
        expect(refusal({model: "m", messages: base.messages})).toEqual({param: "max_tokens", message: "max_tokens: Field required"});
        expect(refusal({...base, messages: [{role: "tool", content: "x"}]}).message)
            .toBe("messages.0.role: Input tag 'tool' found using 'role' does not match any of the expected tags: 'user', 'assistant', 'system'");
        expect(refusal({...base, messages: [{role: "user", content: [{type: "text", text: "a"}, {type: "image", source: {}}]}]}).param).toBe("messages.0.content.1.source.type");
        expect(refusal({...base, messages: [{role: "user", content: [{type: "tool_use", id: "a", name: "b"}]}]})).toEqual({param: "messages.0.content.0.input", message: "messages.0.content.0.input: Field required"});
        expect(refusal({...base, messages: [{role: "system", content: 5}]}).message).toBe("messages.0.content: Input should be a valid string");
        expect(refusal({...base, messages: []}).message).toBe("messages: List should have at least 1 item after validation, not 0");
        expect(refusal({...base, temperature: 1.5}).message).toBe("temperature: Input should be less than or equal to 1");
        expect(refusal({...base, tools: [{type: "web_search_20250305", name: "web_search"}]}).param).toBe("tools.0.type");
        expect(refusal({...base, tool_choice: {type: "tool"}}).message).toBe("tool_choice.name: Field required");
    });
});

describe("ClientFields: the chat path's errors in the client's field names", () => {
    const mapped = toChatRequest({
        model: "m", max_tokens: 10, system: "S",
        tools: [{name: "a", input_schema: {type: "object"}, defer_loading: true}, {name: "b", input_schema: {type: "object"}}],
        output_config: {format: {type: "json_schema", schema: {type: "object"}}},
        messages: [
            user("Hi"),
            {role: "system", content: "env"},
            {role: "assistant", content: [{type: "text", text: "x"}, {type: "tool_use", id: "t1", name: "b", input: {}}, {type: "tool_use", id: "t2", name: "b", input: {}}]},
            user([{type: "tool_result", tool_use_id: "t1", content: "1"}, {type: "tool_result", tool_use_id: "t2", content: "2"}])
        ]
    });

    it("maps chat paths to the client's", () => {
        const fields = mapped.fields;
        expect(fields.of("messages[0]")).toBe("system");
        expect(fields.of("messages[1].content")).toBe("messages.0.content");
        expect(fields.of("messages[2].tool_calls[1].function.arguments")).toBe("messages.2.content.2.input");
        expect(fields.of("messages[2].tool_calls[0]")).toBe("messages.2.content.1");
        expect(fields.of("messages[4].tool_call_id")).toBe("messages.3.content.1.tool_use_id");
        expect(fields.of("messages[9]")).toBe("messages");
        expect(fields.of("tools[0].function.parameters.properties.x")).toBe("tools.1.input_schema.properties.x");
        expect(fields.of("response_format.json_schema.schema.properties")).toBe("output_config.format.schema.properties");
        expect(fields.of("stop")).toBe("stop_sequences");
        expect(fields.of("tool_choice")).toBe("tool_choice");
    });

    it("rewrites an error's param and the fields its message quotes; a prompt too long reads as Anthropic's", () => {
        const error = mapped.fields.error(ApiError.invalidRequest("Invalid type for 'tools[0].function.parameters': expected a JSON schema object.", "tools[0].function.parameters"), toApiError);
        expect(error).toMatchObject({status: 400, param: "tools.1.input_schema", message: "Invalid type for 'tools.1.input_schema': expected a JSON schema object."});
        expect(toAnthropicError(error).body.error.message).toBe("tools.1.input_schema: Invalid type for 'tools.1.input_schema': expected a JSON schema object.");
        const long = mapped.fields.error(new ContextLengthExceededError(4096, 5000), toApiError);
        expect(toAnthropicError(long).body.error.message).toBe("prompt is too long: 5000 tokens > 4096 maximum");
        expect(mapped.fields.error(new ContextLengthExceededError(4096, 9000, {atLeast: true}), toApiError).message).toBe("prompt is too long: at least 9000 tokens > 4096 maximum");
        expect(mapped.fields.error(new Error("internal"), toApiError).status).toBe(500);
    });

    it("a ClientFields with nothing to map leaves names as they are", () => {
        expect(new ClientFields([], []).of("temperature")).toBe("temperature");
    });
});

describe("a Message's fields (pure)", () => {
    it("stop reasons, and usage with cache reads apart and the thinking's tokens", () => {
        expect(toStopReason({finishReason: "stop"})).toBe("end_turn");
        expect(toStopReason({finishReason: "stop", stopSequence: "END"})).toBe("stop_sequence");
        expect(toStopReason({finishReason: "length"})).toBe("max_tokens");
        expect(toStopReason({finishReason: "tool_calls"})).toBe("tool_use");
        expect(promptUsage(100, 60)).toEqual({input_tokens: 40, cache_read_input_tokens: 60, cache_creation_input_tokens: 0});
        expect(toUsage(promptUsage(100, 60), {completionTokens: 12, reasoningTokens: 7}))
            .toEqual({input_tokens: 40, output_tokens: 12, cache_read_input_tokens: 60, cache_creation_input_tokens: 0, output_tokens_details: {thinking_tokens: 7}});
    });
});

describe("toAnthropicError", () => {
    it("uses Anthropic's types and status codes: a full queue is 529 overloaded_error", () => {
        expect(toAnthropicError(ApiError.overloaded("busy", 2), "req_1")).toEqual({status: 529, body: {type: "error", error: {type: "overloaded_error", message: "busy"}, request_id: "req_1"}, headers: {}});
        expect(toAnthropicError(ApiError.invalidApiKey("bad key")).body.error.type).toBe("authentication_error");
        expect(toAnthropicError(ApiError.modelNotFound("x")).body.error).toMatchObject({type: "not_found_error", message: expect.stringMatching(/^model: The model 'x' does not exist/)});
        expect(toAnthropicError(ApiError.invalidRequest("must be a number", "temperature")).body.error).toEqual({type: "invalid_request_error", message: "temperature: must be a number"});
        expect(toAnthropicError(ApiError.invalidRequest("temperature: must be a number", "temperature")).body.error.message).toBe("temperature: must be a number");
        expect(toAnthropicError(ApiError.internal())).toMatchObject({status: 500, body: {error: {type: "api_error"}}});
    });

    it("x-should-retry: false on the 4xx a retry cannot mend, as Anthropic sends it; nothing on 408, 409, 429 and 5xx", () => {
        for (const status of [400, 401, 403, 404, 413, 415])
            expect(toAnthropicError(new ApiError(status, "invalid_request_error", "no")).headers).toEqual({"x-should-retry": "false"});
        for (const status of [408, 409, 429, 500, 503])
            expect(toAnthropicError(new ApiError(status, "invalid_request_error", "later")).headers).toEqual({});
    });
});
