import { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream";
import type { Context } from "koa";
import { describe, expect, it } from "vitest";
import type { RouteContext } from "../../src/capabilities/Capability.js";
import type { ChatEngine, ChatJob } from "../../src/capabilities/chat/ChatEngine.js";
import { finishedMessage, foldMessageEvent } from "../../src/capabilities/chat/messages/foldMessageEvent.js";
import { messageStream } from "../../src/capabilities/chat/messages/MessageEvents.js";
import { thinkingSignature } from "../../src/capabilities/chat/messages/messageFields.js";
import type { Message, MessageStreamEvent } from "../../src/capabilities/chat/messages/MessagesWire.js";
import { runChatTurn } from "../../src/capabilities/chat/turn/runChatTurn.js";
import { runJob } from "../../src/capabilities/chat/turn/runJob.js";
import { scriptedChatEngine } from "../support/scriptedChatEngine.js";

const prompt = {input_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 6};
const start: MessageStreamEvent = {type: "message_start", message: {
    id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage: {...prompt, output_tokens: 0}
}};
const fold = (events: MessageStreamEvent[]) => finishedMessage(events.reduce(foldMessageEvent, undefined)!);
const end = (stopReason: "end_turn" | "tool_use", outputTokens: number, thinkingTokens = 0): MessageStreamEvent[] => [
    {type: "message_delta", delta: {stop_reason: stopReason, stop_sequence: null}, usage: {...prompt, output_tokens: outputTokens, output_tokens_details: {thinking_tokens: thinkingTokens}}},
    {type: "message_stop"}
];

describe("foldMessageEvent (pure: events in, Message out)", () => {
    it("a thinking block (its deltas joined, then its signature), a text block and tool_use blocks whose input is their JSON pieces decoded", () => {
        const message = fold([
            start,
            {type: "ping"},
            {type: "content_block_start", index: 0, content_block: {type: "thinking", thinking: "", signature: ""}},
            {type: "content_block_delta", index: 0, delta: {type: "thinking_delta", thinking: "Two"}},
            {type: "content_block_delta", index: 0, delta: {type: "thinking_delta", thinking: " cities."}},
            {type: "content_block_delta", index: 0, delta: {type: "signature_delta", signature: "sig"}},
            {type: "content_block_stop", index: 0},
            {type: "content_block_start", index: 1, content_block: {type: "text", text: ""}},
            {type: "content_block_delta", index: 1, delta: {type: "text_delta", text: "Checking"}},
            {type: "content_block_delta", index: 1, delta: {type: "text_delta", text: " both."}},
            {type: "content_block_stop", index: 1},
            {type: "content_block_start", index: 2, content_block: {type: "tool_use", id: "toolu_100", name: "weather", input: {}}},
            {type: "content_block_delta", index: 2, delta: {type: "input_json_delta", partial_json: "{\"city\": "}},
            {type: "content_block_delta", index: 2, delta: {type: "input_json_delta", partial_json: "\"Paris\"}"}},
            {type: "content_block_stop", index: 2},
            {type: "content_block_start", index: 3, content_block: {type: "tool_use", id: "toolu_101", name: "clock", input: {}}},
            {type: "content_block_stop", index: 3},
            ...end("tool_use", 20, 5)
        ]);
        expect(message).toEqual({
            id: "msg_1", type: "message", role: "assistant", model: "m",
            content: [
                {type: "thinking", thinking: "Two cities.", signature: "sig"},
                {type: "text", text: "Checking both."},
                {type: "tool_use", id: "toolu_100", name: "weather", input: {city: "Paris"}},
                {type: "tool_use", id: "toolu_101", name: "clock", input: {}}
            ],
            stop_reason: "tool_use", stop_sequence: null,
            usage: {...prompt, output_tokens: 20, output_tokens_details: {thinking_tokens: 5}}
        });
        // The keys in the order the body has always had them.
        expect(Object.keys(message)).toEqual(["id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"]);
        expect(Object.keys(message.usage)).toEqual(["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens", "output_tokens_details"]);
    });

    it("a tool call's input cut short (max_tokens) is {}; a JSON value that is not an object is {value}", () => {
        const call = (json: string): MessageStreamEvent[] => [
            start,
            {type: "content_block_start", index: 0, content_block: {type: "tool_use", id: "toolu_100", name: "w", input: {}}},
            {type: "content_block_delta", index: 0, delta: {type: "input_json_delta", partial_json: json}},
            {type: "content_block_stop", index: 0},
            ...end("tool_use", 3)
        ];
        expect(fold(call("{\"city\": \"Par")).content).toEqual([{type: "tool_use", id: "toolu_100", name: "w", input: {}}]);
        expect(fold(call("[1]")).content).toEqual([{type: "tool_use", id: "toolu_100", name: "w", input: {value: [1]}}]);
    });

    it("keeps copies: the events are left as they were", () => {
        const events: MessageStreamEvent[] = [
            start,
            {type: "content_block_start", index: 0, content_block: {type: "text", text: ""}},
            {type: "content_block_delta", index: 0, delta: {type: "text_delta", text: "Hi"}},
            {type: "content_block_stop", index: 0},
            ...end("end_turn", 1)
        ];
        const before = structuredClone(events);
        fold(events);
        expect(events).toEqual(before);
    });

    it("events out of order are this server's mistake: an error, not a body", () => {
        const text: MessageStreamEvent = {type: "content_block_start", index: 0, content_block: {type: "text", text: ""}};
        expect(() => fold([text])).toThrow("content_block_start before message_start");
        expect(() => fold([start, start])).toThrow("A second message_start");
        expect(() => fold([start, {type: "content_block_start", index: 1, content_block: {type: "text", text: ""}}])).toThrow("block 0 expected");
        expect(() => fold([start, text, {type: "content_block_delta", index: 0, delta: {type: "thinking_delta", thinking: "x"}}])).toThrow("A thinking_delta for a text block at index 0");
        expect(() => fold([start, text, {type: "content_block_stop", index: 0}, {type: "message_stop"}])).toThrow("without their message_delta");
    });
});

const job = {n: 1} as ChatJob;

/** The Message answered without a stream (runChatTurn, as the route runs it: the fold of the events). */
async function plainBody(engine: ChatEngine, omitted: boolean) {
    const ctx = {state: {logFields: {}}, body: undefined} as unknown as Context;
    await runChatTurn(ctx, {} as RouteContext, {stream: false, run: (hooks) => runJob(engine, job, new AbortController().signal, hooks), events: messageStream({id: "msg_1", model: "m"}, omitted)});
    return ctx.body as Message;
}

/** The same turn's events as a stream writes them, folded by @anthropic-ai/sdk's own MessageStream. */
async function foldedBySdk(engine: ChatEngine, omitted: boolean) {
    const lines: string[] = [];
    const stream = messageStream({id: "msg_1", model: "m"}, omitted)((data) => lines.push(JSON.stringify(data)));
    const {started, done} = runJob(engine, job, new AbortController().signal, stream.hooks);
    stream.taken?.(await started);
    stream.finish(await done);
    const {parsed_output: _, ...message} = await MessageStream.fromReadableStream(new Blob([lines.join("\n") + "\n"]).stream()).finalMessage();
    // `parsed_output` is the SDK's own (its structured-output helper), not on the wire.
    return message;
}

describe("a Message's body is the fold of its stream", () => {
    const engine = () => scriptedChatEngine((hooks) => {
        hooks.onPromptCache?.(0, 6);
        hooks.onReasoning?.(0, "They ask for two cities.");
        hooks.onReasoning?.(0, " One call each.");
        hooks.onText?.(0, "Checking both");
        hooks.onText?.(0, " cities.");
        hooks.onToolCall?.(0, {type: "call", index: 0, name: "weather"});
        hooks.onToolCall?.(0, {type: "arguments", index: 0, fragment: "{\"city\": "});
        hooks.onToolCall?.(0, {type: "arguments", index: 0, fragment: "\"Paris\"}"});
        hooks.onToolCall?.(0, {type: "call", index: 1, name: "weather"});
        hooks.onToolCall?.(0, {type: "arguments", index: 1, fragment: "{\"city\": \"Rome\"}"});
    }, {
        index: 0, text: "Checking both cities.", finishReason: "tool_calls", completionTokens: 30, cachedPromptTokens: 6,
        reasoning: "They ask for two cities. One call each.", reasoningTokens: 9,
        toolCalls: [{name: "weather", arguments: "{\"city\": \"Paris\"}"}, {name: "weather", arguments: "{\"city\": \"Rome\"}"}]
    }, 10);

    it.each([false, true])("thinking (display omitted: %s), text and two calls: the body is what the SDK's finalMessage() makes of the events", async (omitted) => {
        const body = await plainBody(engine(), omitted);
        expect(body).toEqual({
            id: "msg_1", type: "message", role: "assistant", model: "m",
            content: [
                {type: "thinking", thinking: omitted ? "" : "They ask for two cities. One call each.", signature: thinkingSignature("They ask for two cities. One call each.")},
                {type: "text", text: "Checking both cities."},
                {type: "tool_use", id: "toolu_100", name: "weather", input: {city: "Paris"}},
                {type: "tool_use", id: "toolu_101", name: "weather", input: {city: "Rome"}}
            ],
            stop_reason: "tool_use", stop_sequence: null,
            usage: {input_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 6, output_tokens: 30, output_tokens_details: {thinking_tokens: 9}}
        });
        expect(JSON.parse(JSON.stringify(await foldedBySdk(engine(), omitted)))).toEqual(body);
    });

    it("an empty answer is one empty text block, streamed and not", async () => {
        const empty = () => scriptedChatEngine(() => {}, {index: 0, text: "", finishReason: "stop", completionTokens: 0, stopSequence: "END"}, 10);
        const body = await plainBody(empty(), false);
        expect(body).toMatchObject({content: [{type: "text", text: ""}], stop_reason: "stop_sequence", stop_sequence: "END"});
        expect(JSON.parse(JSON.stringify(await foldedBySdk(empty(), false)))).toEqual(body);
    });
});
