import { describe, expect, it } from "vitest";
import { toAnthropicError } from "../../src/capabilities/chat/messages/toAnthropicError.js";
import { toChatRequest, toReasoning } from "../../src/capabilities/chat/messages/toChatRequest.js";
import { toMessage, toStopReason } from "../../src/capabilities/chat/messages/toMessage.js";
import { ApiError } from "../../src/core/http/ApiError.js";

describe("toChatRequest (Messages -> chat completions, pure)", () => {
    it("maps system, merges same-role turns, tool_use into tool_calls and tool_result into tool messages", () => {
        const request = toChatRequest({
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
        expect(request).toEqual({
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

    it("tool_choice tool names a function; none is none; a tool not in tools, and a thinking budget not below max_tokens, are 400s naming the field", () => {
        const base = {model: "m", max_tokens: 5, messages: [{role: "user" as const, content: "x"}], tools: [{name: "w", input_schema: {type: "object"}}]};
        expect(toChatRequest({...base, tool_choice: {type: "tool", name: "w"}}).tool_choice).toEqual({type: "function", function: {name: "w"}});
        expect(toChatRequest({...base, tool_choice: {type: "none"}}).tool_choice).toBe("none");
        expect(() => toChatRequest({...base, tool_choice: {type: "tool", name: "nope"}})).toThrow(expect.objectContaining({param: "tool_choice.name"}));
        expect(() => toChatRequest({...base, max_tokens: 1024, thinking: {type: "enabled", budget_tokens: 1024}})).toThrow(expect.objectContaining({param: "thinking.budget_tokens"}));
        expect(() => toChatRequest({...base, max_tokens: 1025, thinking: {type: "enabled", budget_tokens: 1024}})).not.toThrow();
        expect([toReasoning(undefined), toReasoning({type: "disabled"}), toReasoning({type: "enabled", budget_tokens: 1024}), toReasoning({type: "adaptive"})])
            .toEqual([null, {enabled: false, budgetTokens: null}, {enabled: true, budgetTokens: 1024}, {enabled: true, budgetTokens: null}]);
    });
});

describe("toMessage and toStopReason (pure)", () => {
    it("gives text and tool_use blocks, stop reasons, and usage with cache reads apart", () => {
        expect(toStopReason({finishReason: "stop"})).toBe("end_turn");
        expect(toStopReason({finishReason: "stop", stopSequence: "END"})).toBe("stop_sequence");
        expect(toStopReason({finishReason: "length"})).toBe("max_tokens");
        expect(toStopReason({finishReason: "tool_calls"})).toBe("tool_use");
        const message = toMessage("msg_abc", "m", 100, {index: 0, text: "", finishReason: "tool_calls", completionTokens: 9, cachedPromptTokens: 60,
            toolCalls: [{name: "w", arguments: "{\"city\":\"Oslo\"}"}]});
        expect(message).toEqual({
            id: "msg_abc", type: "message", role: "assistant", model: "m",
            content: [{type: "tool_use", id: "toolu_abc00", name: "w", input: {city: "Oslo"}}],
            stop_reason: "tool_use", stop_sequence: null,
            usage: {input_tokens: 40, output_tokens: 9, cache_read_input_tokens: 60, cache_creation_input_tokens: 0}
        });
    });
});

describe("toAnthropicError", () => {
    it("uses Anthropic's types and status codes: a full queue is 529 overloaded_error", () => {
        expect(toAnthropicError(ApiError.overloaded("busy", 2))).toEqual({status: 529, body: {type: "error", error: {type: "overloaded_error", message: "busy"}}});
        expect(toAnthropicError(ApiError.invalidApiKey("bad key")).body.error.type).toBe("authentication_error");
        expect(toAnthropicError(ApiError.modelNotFound("x")).body.error.type).toBe("not_found_error");
        expect(toAnthropicError(ApiError.invalidRequest("must be a number", "temperature")).body.error).toEqual({type: "invalid_request_error", message: "must be a number (temperature)"});
        expect(toAnthropicError(ApiError.internal())).toMatchObject({status: 500, body: {error: {type: "api_error"}}});
    });
});
