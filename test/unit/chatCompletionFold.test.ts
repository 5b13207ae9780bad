import type { Context } from "koa";
import { ChatCompletionStream } from "openai/lib/ChatCompletionStream";
import { describe, expect, it } from "vitest";
import type { RouteContext } from "../../src/capabilities/Capability.js";
import type { ChatEngine, ChatJob, TokenLogprob } from "../../src/capabilities/chat/ChatEngine.js";
import type { ChatCompletion, ChatCompletionChunk } from "../../src/capabilities/chat/ChatCompletionWire.js";
import { chatCompletionEvents } from "../../src/capabilities/chat/chatCompletionEvents.js";
import { toChunk, type CompletionEnvelope } from "../../src/capabilities/chat/chatResponses.js";
import { finishedCompletion, foldChatCompletionChunk } from "../../src/capabilities/chat/foldChatCompletionChunk.js";
import { runChatTurn } from "../../src/capabilities/chat/turn/runChatTurn.js";
import { runJob } from "../../src/capabilities/chat/turn/runJob.js";
import { scriptedChatEngine } from "../support/scriptedChatEngine.js";

const envelope: CompletionEnvelope = {id: "chatcmpl-1", created: 1_700_000_000, model: "m", systemFingerprint: "fp_1"};
const chunk = (choice: ChatCompletionChunk["choices"][number] | null, usage?: ChatCompletionChunk["usage"]) => toChunk(envelope, choice, usage);
const fold = (chunks: ChatCompletionChunk[]) => finishedCompletion(chunks.reduce(foldChatCompletionChunk, undefined)!);

const entry = (token: string): TokenLogprob => ({token, logprob: -0.5, bytes: [...Buffer.from(token)], topLogprobs: []});
const wireEntry = (token: string) => ({token, logprob: -0.5, bytes: [...Buffer.from(token)], top_logprobs: []});

describe("foldChatCompletionChunk (pure: chunks in, completion out)", () => {
    it("n=2 interleaved: content appended per choice, logprobs entries appended, finish reasons set, usage from the last chunk", () => {
        const usage = {prompt_tokens: 4, completion_tokens: 3, total_tokens: 7};
        const completion = fold([
            chunk({index: 0, delta: {role: "assistant", content: ""}, logprobs: {content: [], refusal: null}, finish_reason: null}, null),
            chunk({index: 1, delta: {role: "assistant", content: ""}, logprobs: {content: [], refusal: null}, finish_reason: null}, null),
            chunk({index: 1, delta: {content: "Hi"}, logprobs: {content: [wireEntry("Hi")], refusal: null}, finish_reason: null}, null),
            chunk({index: 0, delta: {content: "Hel"}, logprobs: {content: [wireEntry("Hel")], refusal: null}, finish_reason: null}, null),
            chunk({index: 0, delta: {content: "lo"}, logprobs: {content: [wireEntry("lo")], refusal: null}, finish_reason: null}, null),
            chunk({index: 1, delta: {}, logprobs: null, finish_reason: "length"}, null),
            chunk({index: 0, delta: {}, logprobs: null, finish_reason: "stop"}, null),
            chunk(null, usage)
        ]);
        expect(completion).toEqual({
            id: "chatcmpl-1", object: "chat.completion", created: 1_700_000_000, model: "m", system_fingerprint: "fp_1",
            choices: [
                {index: 0, message: {role: "assistant", content: "Hello", refusal: null}, logprobs: {content: [wireEntry("Hel"), wireEntry("lo")], refusal: null}, finish_reason: "stop"},
                {index: 1, message: {role: "assistant", content: "Hi", refusal: null}, logprobs: {content: [wireEntry("Hi")], refusal: null}, finish_reason: "length"}
            ],
            usage
        });
        // The keys in the order the body has always had them.
        expect(Object.keys(completion)).toEqual(["id", "object", "created", "model", "system_fingerprint", "choices", "usage"]);
        expect(Object.keys(completion.choices[0])).toEqual(["index", "message", "logprobs", "finish_reason"]);
    });

    it("tool calls by their index (id, type and name set once, arguments appended), reasoning appended; calls without text have content null", () => {
        const usage = {prompt_tokens: 1, completion_tokens: 9, total_tokens: 10};
        const completion = fold([
            chunk({index: 0, delta: {role: "assistant", content: ""}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {reasoning_content: "Two"}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {reasoning_content: " cities."}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {tool_calls: [{index: 0, id: "call_a", type: "function", function: {name: "weather", arguments: ""}}]}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {tool_calls: [{index: 0, function: {arguments: "{\"city\": "}}]}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {tool_calls: [{index: 1, id: "call_b", type: "function", function: {name: "weather", arguments: ""}}]}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {tool_calls: [{index: 0, function: {arguments: "\"Paris\"}"}}]}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {tool_calls: [{index: 1, function: {arguments: "{\"city\": \"Rome\"}"}}]}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {}, logprobs: null, finish_reason: "tool_calls"}),
            chunk(null, usage)
        ]);
        expect(completion.choices).toEqual([{
            index: 0,
            message: {
                role: "assistant", content: null, refusal: null,
                tool_calls: [
                    {id: "call_a", type: "function", function: {name: "weather", arguments: "{\"city\": \"Paris\"}"}},
                    {id: "call_b", type: "function", function: {name: "weather", arguments: "{\"city\": \"Rome\"}"}}
                ],
                reasoning_content: "Two cities."
            },
            logprobs: null, finish_reason: "tool_calls"
        }]);
    });

    it("the deprecated function_call: its name, then its arguments appended; text before it stays", () => {
        const completion = fold([
            chunk({index: 0, delta: {role: "assistant", content: ""}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {content: "Let me look."}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {function_call: {name: "lookup", arguments: ""}}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {function_call: {arguments: "{\"q\":"}}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {function_call: {arguments: "1}"}}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {}, logprobs: null, finish_reason: "function_call"}),
            chunk(null, {prompt_tokens: 1, completion_tokens: 1, total_tokens: 2})
        ]);
        expect(completion.choices[0].message).toEqual({role: "assistant", content: "Let me look.", refusal: null, function_call: {name: "lookup", arguments: "{\"q\":1}"}});
    });

    it("an empty answer is \"\" (the role chunk's content), not null; no reasoning came: no reasoning_content", () => {
        const completion = fold([
            chunk({index: 0, delta: {role: "assistant", content: ""}, logprobs: null, finish_reason: null}),
            chunk({index: 0, delta: {}, logprobs: null, finish_reason: "stop"}),
            chunk(null, {prompt_tokens: 1, completion_tokens: 0, total_tokens: 1})
        ]);
        expect(completion.choices[0].message).toEqual({role: "assistant", content: "", refusal: null});
    });

    it("keeps copies: folding does not change the chunks, and chunks changed later do not change the fold", () => {
        const logprobs = {content: [wireEntry("a")], refusal: null};
        const chunks = [
            chunk({index: 0, delta: {role: "assistant", content: ""}, logprobs: {content: [], refusal: null}, finish_reason: null}),
            chunk({index: 0, delta: {content: "a"}, logprobs, finish_reason: null}),
            chunk({index: 0, delta: {content: "b"}, logprobs: {content: [wireEntry("b")], refusal: null}, finish_reason: "stop"}),
            chunk(null, {prompt_tokens: 1, completion_tokens: 2, total_tokens: 3})
        ];
        const before = structuredClone(chunks);
        const completion = fold(chunks);
        expect(chunks).toEqual(before);
        logprobs.content.push(wireEntry("x"));
        chunks[3].usage!.total_tokens = 99;
        expect(completion.choices[0].logprobs!.content).toEqual([wireEntry("a"), wireEntry("b")]);
        expect(completion.usage.total_tokens).toBe(3);
    });

    it("chunks that cannot make an answer are this server's mistake: an error, not a body", () => {
        const opening = chunk({index: 0, delta: {role: "assistant", content: ""}, logprobs: null, finish_reason: null});
        const usage = chunk(null, {prompt_tokens: 1, completion_tokens: 0, total_tokens: 1});
        expect(() => fold([opening, usage])).toThrow("Choice 0 of a chat completion's chunks has no finish_reason");
        expect(() => fold([opening, chunk({index: 0, delta: {}, logprobs: null, finish_reason: "stop"})])).toThrow("without usage");
        expect(() => fold([opening, chunk({index: 0, delta: {tool_calls: [{index: 0, function: {arguments: "{}"}}]}, logprobs: null, finish_reason: "tool_calls"}), usage]))
            .toThrow("Tool call 0 of choice 0 has no id or type");
    });
});

type Options = Parameters<typeof chatCompletionEvents>[2];

/** The completion answered without a stream (runChatTurn, as the route runs it: the fold, with usage). */
async function plainBody(engine: ChatEngine, n: number, options: Omit<Options, "includeUsage">) {
    const ctx = {state: {logFields: {}}, body: undefined} as unknown as Context;
    await runChatTurn(ctx, {} as RouteContext, {
        stream: false,
        run: (hooks) => runJob(engine, {n} as ChatJob, new AbortController().signal, hooks),
        events: chatCompletionEvents(envelope, n, {...options, includeUsage: true})
    });
    return ctx.body as ChatCompletion;
}

/** The same turn's chunks as a stream writes them (`include_usage`), folded by openai-node's own ChatCompletionStream. */
async function foldedBySdk(engine: ChatEngine, n: number, options: Omit<Options, "includeUsage">) {
    const lines: string[] = [];
    const stream = chatCompletionEvents(envelope, n, {...options, includeUsage: true})((data) => lines.push(JSON.stringify(data)));
    const {started, done} = runJob(engine, {n} as ChatJob, new AbortController().signal, stream.hooks);
    await started;
    stream.finish(await done);
    const body = new Blob([lines.join("\n") + "\n"]).stream();
    return ChatCompletionStream.fromReadableStream(body).finalChatCompletion();
}

describe("a chat completion's body is the fold of its stream", () => {
    it("n=2 with text, logprobs and tool calls: the body is what openai-node's finalChatCompletion() makes of the chunks", async () => {
        const engine = () => scriptedChatEngine((hooks) => {
            hooks.onText?.(1, "", [entry("<s>")]);
            hooks.onText?.(0, "Checking", [entry("Checking")]);
            hooks.onText?.(1, "Just", [entry("Just")]);
            hooks.onToolCall?.(0, {type: "call", index: 0, name: "weather"}, [entry("<tool>")]);
            hooks.onText?.(1, " text.", [entry(" text.")]);
            hooks.onToolCall?.(0, {type: "arguments", index: 0, fragment: "{\"city\": "}, [entry("{\"city\": ")]);
            hooks.onToolCall?.(0, {type: "arguments", index: 0, fragment: "\"Paris\"}"}, [entry("\"Paris\"}")]);
        }, [
            {index: 0, text: "Checking", finishReason: "tool_calls", completionTokens: 4, toolCalls: [{name: "weather", arguments: "{\"city\": \"Paris\"}"}]},
            {index: 1, text: "Just text.", finishReason: "stop", completionTokens: 3, cachedPromptTokens: 5}
        ]);
        const options = {deprecatedFunctions: false, logprobs: true};
        const body = await plainBody(engine(), 2, options);
        const sdk = await foldedBySdk(engine(), 2, options);
        expect(body.choices[0].message.tool_calls![0].id).toMatch(/^call_/);
        expect(body.choices[0].message.content).toBe("Checking");
        expect(body.choices[1].logprobs!.content!.map((logprob) => logprob.token)).toEqual(["<s>", "Just", " text."]);
        expect(body.usage).toEqual({prompt_tokens: 11, completion_tokens: 7, total_tokens: 18});
        // Each fold calls its own ids; the SDK adds `parsed` and `tool_calls: []`'s `parsed_arguments` of its own.
        const comparable = (completion: ChatCompletion | typeof sdk) => JSON.parse(JSON.stringify(completion, (key, value) =>
            key === "id" && typeof value === "string" && value.startsWith("call_") ? "call" : key === "parsed" || key === "parsed_arguments" ? undefined : value));
        expect(comparable(sdk)).toEqual(comparable(body));
    });

    it("a zero-token answer with logprobs asked: an empty entries list, not null (an empty content chunk carries it)", async () => {
        const engine = () => scriptedChatEngine(() => {}, [{index: 0, text: "", finishReason: "stop", completionTokens: 0}]);
        const body = await plainBody(engine(), 1, {deprecatedFunctions: false, logprobs: true});
        expect(body.choices[0]).toEqual({index: 0, message: {role: "assistant", content: "", refusal: null}, logprobs: {content: [], refusal: null}, finish_reason: "stop"});
        const chunks: ChatCompletionChunk[] = [];
        const stream = chatCompletionEvents(envelope, 1, {deprecatedFunctions: false, logprobs: true, includeUsage: false})((data) => chunks.push(data as ChatCompletionChunk));
        const {started, done} = runJob(engine(), {n: 1} as ChatJob, new AbortController().signal, stream.hooks);
        await started;
        // Streamed without usage, the chunks fold to no answer (none is needed).
        expect(stream.finish(await done)).toBeUndefined();
        expect(chunks.map((chunk) => chunk.choices[0])).toEqual([
            {index: 0, delta: {role: "assistant", content: null}, logprobs: null, finish_reason: null},
            {index: 0, delta: {content: ""}, logprobs: {content: [], refusal: null}, finish_reason: null},
            {index: 0, delta: {}, logprobs: null, finish_reason: "stop"}
        ]);
        const plain = await plainBody(engine(), 1, {deprecatedFunctions: false, logprobs: false});
        expect(plain.choices[0].logprobs).toBeNull();
    });
});
