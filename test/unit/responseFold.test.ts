import type { Context } from "koa";
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator";
import type { ResponseStreamEvent as SdkEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import type { RouteContext } from "../../src/capabilities/Capability.js";
import type { ChatEngine, ChatJob } from "../../src/capabilities/chat/ChatEngine.js";
import { responseStream } from "../../src/capabilities/chat/responses/ResponseEvents.js";
import type { ResponseObject } from "../../src/capabilities/chat/responses/ResponsesWire.js";
import { toResponse, type OutputOptions, type ResponseIds } from "../../src/capabilities/chat/responses/toResponse.js";
import { runChatTurn, type ChatTurn } from "../../src/capabilities/chat/turn/runChatTurn.js";
import { runJob, type JobDone } from "../../src/capabilities/chat/turn/runJob.js";
import { scriptedChatEngine } from "../support/scriptedChatEngine.js";

const ids: ResponseIds = {response: "resp_1", message: "msg_1", reasoning: "rs_1", call: (index, kind) => ({id: `${kind === "custom" ? "ctc" : "fc"}_${index}`, callId: `call_${index}`})};
const job = {n: 1} as ChatJob;
const turnOf = (engine: ChatEngine, options: OutputOptions, stored: ResponseObject[]): ChatTurn<JobDone> => ({
    stream: false,
    run: (hooks) => runJob(engine, job, new AbortController().signal, hooks),
    events: responseStream(toResponse(ids.response, 1, "m", {model: "m", input: "x"}, {status: "in_progress", output: [], usage: null}), ids, options,
        (response) => stored.push(response))
});

/** The response answered without a stream (runChatTurn's body), and the one stored. */
async function plainBody(engine: ChatEngine, options: OutputOptions) {
    const stored: ResponseObject[] = [];
    const ctx = {state: {logFields: {}}, body: undefined} as unknown as Context;
    await runChatTurn(ctx, {} as RouteContext, turnOf(engine, options, stored));
    return {body: ctx.body as ResponseObject, stored: stored[0]};
}

/** The events of the same turn streamed (as runChatTurn runs a stream's converter), folded by the openai SDK's own accumulator. */
async function streamed(engine: ChatEngine, options: OutputOptions) {
    const events: SdkEvent[] = [];
    const stream = turnOf(engine, options, []).events((data) => events.push(JSON.parse(JSON.stringify(data))));
    const {started, done} = runJob(engine, job, new AbortController().signal, stream.hooks);
    stream.taken?.(await started);
    stream.finish(await done);
    let folded: ReturnType<typeof accumulateResponse> | undefined;
    for (const event of events)
        folded = accumulateResponse(event, folded);
    const {output_text: _, ...response} = folded!;
    return {events, folded: response};
}

const noTools: OutputOptions = {tools: new Map(), encryptedReasoning: false, logprobs: false};

describe("a response's body is the fold of its stream", () => {
    // Reasoning, text and two function calls, the text streamed with the whitespace the engine trims before a call.
    const engine = () => scriptedChatEngine((hooks) => {
        hooks.onReasoning?.(0, "\nThey ask for two cities.");
        hooks.onReasoning?.(0, " One call each.\n");
        hooks.onText?.(0, "Checking both");
        hooks.onText?.(0, " cities. \n");
        hooks.onToolCall?.(0, {type: "call", index: 0, name: "weather"});
        hooks.onToolCall?.(0, {type: "arguments", index: 0, fragment: "{\"city\": "});
        hooks.onToolCall?.(0, {type: "arguments", index: 0, fragment: "\"Paris\"}"});
        hooks.onToolCall?.(0, {type: "call", index: 1, name: "weather"});
        hooks.onToolCall?.(0, {type: "arguments", index: 1, fragment: "{\"city\": \"Rome\"}"});
    }, {
        index: 0, text: "Checking both cities.", finishReason: "tool_calls", completionTokens: 30, reasoning: "They ask for two cities. One call each.", reasoningTokens: 9,
        toolCalls: [{name: "weather", arguments: "{\"city\": \"Paris\"}"}, {name: "weather", arguments: "{\"city\": \"Rome\"}"}]
    });

    it("reasoning + text + two function calls: the SDK's fold of the stream equals the plain body, text trimmed before the calls", async () => {
        const plain = await plainBody(engine(), noTools);
        const {events, folded} = await streamed(engine(), noTools);
        expect(folded).toEqual(plain.body);
        expect(plain.stored).toEqual(plain.body);
        expect(plain.body).toMatchObject({status: "completed", incomplete_details: null, usage: {input_tokens: 11, output_tokens: 30, output_tokens_details: {reasoning_tokens: 9}}});
        expect(plain.body.output).toEqual([
            {type: "reasoning", id: "rs_1", summary: [{type: "summary_text", text: "They ask for two cities. One call each."}],
                content: [{type: "reasoning_text", text: "They ask for two cities. One call each."}], status: "completed"},
            {type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{type: "output_text", text: "Checking both cities.", annotations: [], logprobs: []}]},
            {type: "function_call", id: "fc_0", call_id: "call_0", name: "weather", arguments: "{\"city\": \"Paris\"}", status: "completed"},
            {type: "function_call", id: "fc_1", call_id: "call_1", name: "weather", arguments: "{\"city\": \"Rome\"}", status: "completed"}
        ]);
        // The deltas carried the untrimmed text; its `done` event the text the body has.
        expect(events.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta).join("")).toBe("Checking both cities. \n");
        expect(events.find((event) => event.type === "response.output_text.done")).toMatchObject({output_index: 1, text: "Checking both cities."});
        expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
        expect(events.filter((event) => event.type === "response.output_item.done").map((event) => event.output_index)).toEqual([0, 1, 2, 3]);
    });

    it("an empty answer is one empty message; a cut one is incomplete, with its reasoning when the cut came before the answer", async () => {
        const empty = scriptedChatEngine(() => {}, {index: 0, text: "", finishReason: "stop", completionTokens: 1});
        const plain = await plainBody(empty, noTools);
        expect((await streamed(empty, noTools)).folded).toEqual(plain.body);
        expect(plain.body.output).toEqual([{type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{type: "output_text", text: "", annotations: [], logprobs: []}]}]);

        const cut = () => scriptedChatEngine((hooks) => hooks.onReasoning?.(0, "Hmm, let me"), {index: 0, text: "", finishReason: "length", completionTokens: 4, reasoning: "Hmm, let me"});
        const cutBody = (await plainBody(cut(), noTools)).body;
        expect((await streamed(cut(), noTools)).folded).toEqual(cutBody);
        expect(cutBody).toMatchObject({status: "incomplete", incomplete_details: {reason: "max_output_tokens"}});
        expect(cutBody.output.map((item) => [item.type, item.status])).toEqual([["reasoning", "incomplete"], ["message", "incomplete"]]);
    });

    it("a function call cut by max_output_tokens is incomplete (the calls before it are completed), in the body and the stream's fold", async () => {
        const cut = () => scriptedChatEngine((hooks) => {
            hooks.onToolCall?.(0, {type: "call", index: 0, name: "weather"});
            hooks.onToolCall?.(0, {type: "arguments", index: 0, fragment: "{\"city\": \"Paris\"}"});
            hooks.onToolCall?.(0, {type: "call", index: 1, name: "weather"});
            hooks.onToolCall?.(0, {type: "arguments", index: 1, fragment: "{\"city\": \"Ro"});
        }, {
            index: 0, text: "", finishReason: "length", completionTokens: 30,
            toolCalls: [{name: "weather", arguments: "{\"city\": \"Paris\"}"}, {name: "weather", arguments: "{\"city\": \"Ro", cut: true}]
        });
        const body = (await plainBody(cut(), noTools)).body;
        const {events, folded} = await streamed(cut(), noTools);
        expect(folded).toEqual(body);
        expect(body).toMatchObject({status: "incomplete", incomplete_details: {reason: "max_output_tokens"}});
        expect(body.output.map((item) => [item.type, item.status])).toEqual([["function_call", "completed"], ["function_call", "incomplete"]]);
        expect(events.filter((event) => event.type === "response.output_item.done").map((event) => (event.item as {status?: string}).status))
            .toEqual(["completed", "incomplete"]);

        // Cut after a whole call, before the next one's name (that one is dropped): the call it has is completed.
        const afterCall = scriptedChatEngine((hooks) => {
            hooks.onToolCall?.(0, {type: "call", index: 0, name: "weather"});
            hooks.onToolCall?.(0, {type: "arguments", index: 0, fragment: "{\"city\": \"Paris\"}"});
        }, {index: 0, text: "", finishReason: "length", completionTokens: 30, toolCalls: [{name: "weather", arguments: "{\"city\": \"Paris\"}"}]});
        const whole = (await plainBody(afterCall, noTools)).body;
        expect(whole.status).toBe("incomplete");
        expect(whole.output.map((item) => [item.type, item.status])).toEqual([["function_call", "completed"]]);
    });

    it("announces no item the response will not have: reasoning that stayed whitespace, logprobs of a call's tokens", async () => {
        const entry = {token: "<call>", logprob: -0.1, bytes: [60], topLogprobs: []};
        const blank = () => scriptedChatEngine((hooks) => {
            hooks.onReasoning?.(0, "\n\n");
            hooks.onToolCall?.(0, {type: "call", index: 0, name: "weather"});
            hooks.onToolCall?.(0, {type: "arguments", index: 0, fragment: "{}"});
            hooks.onText?.(0, "", [entry]);
        }, {index: 0, text: "", finishReason: "tool_calls", completionTokens: 5, reasoning: null, logprobs: [entry], toolCalls: [{name: "weather", arguments: "{}"}]});
        const withLogprobs = {...noTools, logprobs: true};
        const plain = await plainBody(blank(), withLogprobs);
        const {events, folded} = await streamed(blank(), withLogprobs);
        expect(folded).toEqual(plain.body);
        expect(plain.body.output).toEqual([{type: "function_call", id: "fc_0", call_id: "call_0", name: "weather", arguments: "{}", status: "completed"}]);
        expect(events.filter((event) => event.type === "response.output_item.added")).toHaveLength(1);
    });
});
