import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BodyMemory } from "../../src/core/http/BodyMemory.js";
import { jsonBody } from "../../src/core/http/jsonBody.js";
import type { RequestState } from "../../src/core/http/RequestState.js";
import type { EngineHost } from "../../src/core/engines/EngineHost.js";
import { movedStringLength } from "../../src/core/workers/movedStrings.js";
import { earlyPromptFloor, eitherTextAt, messageTextAt } from "../../src/capabilities/chat/turn/earlyPromptFloor.js";
import { ContextLengthExceededError } from "../../src/capabilities/chat/errors/ContextLengthExceededError.js";
import { startBodyParserApp } from "../support/bodyParserApp.js";

// jsonBody leaves a body's long strings as bytes until the body is read (RequestState.longStrings), and earlyPromptFloor
// refuses from their sizes a prompt that cannot fit: a refused 10 MB prompt is never made a string on the main thread.
let app: Awaited<ReturnType<typeof startBodyParserApp>>;
let url: string;
let seen: {before: RequestState["longStrings"], valueBefore: string, body: unknown, after: RequestState["longStrings"]}[] = [];

beforeAll(async () => {
    app = await startBodyParserApp(jsonBody("20mb", new BodyMemory(64 * 1024 * 1024)), (ctx) => {
        const state = ctx.state as RequestState;
        const before = state.longStrings == null ? undefined : {value: state.longStrings.value, strings: [...state.longStrings.strings]};
        const valueBefore = JSON.stringify(before?.value);
        const body = ctx.request.body;
        seen.push({before, valueBefore, body, after: state.longStrings});
        ctx.body = {ok: true};
    });
    url = app.url;
});
afterAll(() => app.close());

const post = (body: unknown) => fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});

describe("a JSON body's long strings until the body is read", () => {
    it("are listed with their place and length, the body holding \"\" there; reading the body makes them strings again", async () => {
        seen = [];
        const latin1 = "é".repeat(movedStringLength);
        const emoji = "😀".repeat(movedStringLength / 2);
        const sent = {model: "m", messages: [{role: "user", content: latin1}, {role: "user", content: [{type: "text", text: emoji}]}], short: "x".repeat(1000)};
        expect((await post(sent)).status).toBe(200);
        const [{before, valueBefore, body, after}] = seen;
        expect(before!.strings.map(({path, length}) => ({path, length})).sort((a, b) => a.path.length - b.path.length)).toEqual([
            // Their lengths, as the strings will have (é moved as Latin-1, 😀 as UTF-16).
            {path: ["messages", 0, "content"], length: movedStringLength},
            {path: ["messages", 1, "content", 0, "text"], length: movedStringLength}
        ]);
        expect(JSON.parse(valueBefore)).toEqual({...sent, messages: [{role: "user", content: ""}, {role: "user", content: [{type: "text", text: ""}]}]});
        expect(body).toEqual(sent);
        expect(after).toBeUndefined();
    });

    it("a body without long strings is the body at once", async () => {
        seen = [];
        expect((await post({model: "m", prompt: "x".repeat(300_000)})).status).toBe(200);
        expect(seen[0].before).toBeUndefined();
        expect(seen[0].body).toEqual({model: "m", prompt: "x".repeat(300_000)});
    });
});

describe("earlyPromptFloor", () => {
    // A loaded model whose text is at least one token per 4 bytes (its longest piece), context 1,000 tokens.
    const engine = {info: {contextSize: 1000}, textTokensAtLeast: (bytes: number) => Math.ceil(bytes / 4)};
    const engines = (loaded: boolean) => ({loadedEngine: (name: string, task: string) => loaded && name === "m" && task === "chat" ? {entry: {id: "m-id"}, engine} : null}) as unknown as EngineHost;
    const stateOf = (value: Record<string, unknown>, strings: [(string | number)[], number][]) =>
        ({longStrings: {value, strings: strings.map(([path, length]) => ({path, length}))}}) as unknown as RequestState;
    const chat = messageTextAt("messages", ["system", "developer", "user"], "text");
    const conversation = {model: "m", messages: [
        {role: "system", content: ""}, {role: "user", content: [{type: "text", text: ""}, {type: "image_url", text: ""}]},
        {role: "assistant", content: ""}, {role: "tool", content: ""}
    ]};

    it("refuses with the engine's error when the prompt text alone cannot fit: its texts summed, at least bytes / longest piece", () => {
        const refusal = earlyPromptFloor(engines(true), stateOf(conversation, [[["messages", 0, "content"], 2000], [["messages", 1, "content", 0, "text"], 2004]]), chat);
        expect(refusal?.error).toBeInstanceOf(ContextLengthExceededError);
        expect(refusal).toMatchObject({prompt: 0, model: "m-id", error: {contextSize: 1000, promptTokens: 1001, atLeast: true}});
        // One byte fewer fits (1,000 tokens would be refused: the floor refuses at the context size).
        expect(earlyPromptFloor(engines(true), stateOf(conversation, [[["messages", 0, "content"], 2000], [["messages", 1, "content", 0, "text"], 1995]]), chat)).toBeNull();
    });

    it("counts only text surely rendered as it is: not assistant or tool turns, not a part of another type, not other fields", () => {
        for (const path of [["messages", 2, "content"], ["messages", 3, "content"], ["messages", 1, "content", 1, "text"], ["user"], ["tools", 0, "function", "description"]])
            expect(earlyPromptFloor(engines(true), stateOf(conversation, [[path, 10_000_000]]), chat)).toBeNull();
    });

    it("does nothing for a model not loaded, or a body without long strings", () => {
        expect(earlyPromptFloor(engines(false), stateOf(conversation, [[["messages", 0, "content"], 10_000_000]]), chat)).toBeNull();
        expect(earlyPromptFloor(engines(true), {} as RequestState, chat)).toBeNull();
    });

    it("a completions request's prompts each alone; Responses' items by their type", () => {
        const prompts = (_body: unknown, path: readonly (string | number)[]) => path[0] === "prompt" && typeof path[1] === "number" ? path[1] : null;
        const twoPrompts = stateOf({model: "m", prompt: ["", ""]}, [[["prompt", 0], 3000], [["prompt", 1], 3000]]);
        expect(earlyPromptFloor(engines(true), twoPrompts, prompts)).toBeNull();
        expect(earlyPromptFloor(engines(true), stateOf({model: "m", prompt: ["", ""]}, [[["prompt", 0], 3000], [["prompt", 1], 4001]]), prompts)).toMatchObject({prompt: 1});
        const responses = eitherTextAt(messageTextAt("input", ["user"], "input_text", "message"), (_body, path) => path[0] === "instructions" ? 0 : null);
        const input = {model: "m", input: [{type: "message", role: "user", content: ""}, {type: "function_call_output", role: "user", content: ""}, {role: "user", content: [{type: "input_text", text: ""}]}]};
        expect(earlyPromptFloor(engines(true), stateOf(input, [[["input", 1, "content"], 10_000_000]]), responses)).toBeNull();
        for (const path of [["input", 0, "content"], ["input", 2, "content", 0, "text"], ["instructions"]])
            expect(earlyPromptFloor(engines(true), stateOf(input, [[path, 4001]]), responses)).toMatchObject({prompt: 0});
    });
});
