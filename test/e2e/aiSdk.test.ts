import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Capability } from "../../src/capabilities/Capability.js";
import { chatCapability } from "../../src/capabilities/chat/chatCapability.js";
import { defaultConfig } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { storiesModelPath, tinyToolsModelPath } from "../support/testModels.js";

// The Vercel AI SDK, unchanged, against the server: its default OpenAI provider (`createOpenAI()(model)`, which calls the
// Responses API) and its Anthropic provider (the Messages API), with generateText, streamText and a forced tool.
const key = "sk-ai-sdk-test";
let server: TestServer;
beforeAll(async () => {
    server = await startTestServer({
        models: [
            {id: "stories", task: "chat", path: storiesModelPath, contextSize: 1024, parallel: 2},
            {id: "tools", task: "chat", path: tinyToolsModelPath, contextSize: 1024, parallel: 2},
            {id: "thinker", task: "chat", path: storiesModelPath}
        ],
        config: {apiKeys: [key]}, apiKey: key,
        factories: {chat: async (entry) => entry.id === "thinker"
            ? new FakeChatEngine("thinker", {pieces: ["<think>", "Let me", " think.", "</think>", "\n\n", "Hello."], info: {reasoningFormat: "think-tags"}})
            : (chatCapability as Capability).createEngine(entry, {config: {...defaultConfig, gpu: "off"}, logger: createLogger("silent"), workers: () => {
            throw new Error("chat needs no worker pool");
        }})}
    });
});
afterAll(() => server.stop());

const providers = () => ({
    openai: createOpenAI({baseURL: `${server.url}/v1`, apiKey: key}),
    anthropic: createAnthropic({baseURL: `${server.url}/v1`, apiKey: key})
});

/** The greedy text chat completions gives for the same prompt: what every wire format must agree with. */
async function greedyChatText(maxTokens: number) {
    const completion = await server.client.chat.completions.create({model: "stories", messages: [{role: "user", content: "Once upon a time"}], max_tokens: maxTokens, temperature: 0});
    return completion.choices[0].message.content;
}

const weather = tool({
    description: "The weather in a city",
    inputSchema: z.object({city: z.enum(["Paris", "Rome", "Oslo"])})
});

describe.each(["openai", "anthropic"] as const)("the AI SDK's %s provider", (provider) => {
    const model = (id: string) => providers()[provider](id);

    it("generateText: the same greedy text as chat completions, usage and finish reason", async () => {
        const result = await generateText({model: model("stories"), prompt: "Once upon a time", maxOutputTokens: 24, temperature: 0});
        expect(result.text).toBe(await greedyChatText(24));
        expect(result.finishReason).toBe("length");
        expect(result.usage.outputTokens).toBe(24);
        expect(result.usage.inputTokens).toBeGreaterThan(0);
    });

    it("streamText: the streamed text equals the non-streamed one", async () => {
        const result = streamText({model: model("stories"), prompt: "Once upon a time", maxOutputTokens: 24, temperature: 0});
        let text = "";
        for await (const delta of result.textStream)
            text += delta;
        expect(text).toBe(await greedyChatText(24));
        expect(await result.finishReason).toBe("length");
    });

    it("a forced tool: the call's name and typed input reach the SDK", async () => {
        const result = await generateText({
            model: model("tools"), prompt: "What is the weather in Paris?", maxOutputTokens: 200, temperature: 0,
            tools: {get_weather: weather}, toolChoice: {type: "tool", toolName: "get_weather"}, stopWhen: stepCountIs(1)
        });
        expect(result.toolCalls).toHaveLength(1);
        expect(result.toolCalls[0].toolName).toBe("get_weather");
        expect(["Paris", "Rome", "Oslo"]).toContain((result.toolCalls[0].input as {city: string}).city);
        expect(result.finishReason).toBe("tool-calls");
    });

    it("a thinking model: the SDK reads the reasoning apart from the text, streamed and not", async () => {
        const result = await generateText({model: model("thinker"), prompt: "hi", maxOutputTokens: 100});
        expect(result.text).toBe("Hello.");
        expect(result.reasoningText).toBe("Let me think.");
        const streamed = streamText({model: model("thinker"), prompt: "hi", maxOutputTokens: 100});
        let reasoning = "";
        let text = "";
        const order: string[] = [];
        for await (const part of streamed.fullStream) {
            if (part.type === "reasoning-delta")
                reasoning += part.text;
            if (part.type === "text-delta")
                text += part.text;
            if (part.type === "reasoning-end" || (part.type === "text-delta" && !order.includes("text")))
                order.push(part.type === "reasoning-end" ? "reasoning-end" : "text");
        }
        expect([reasoning, text]).toEqual(["Let me think.", "Hello."]);
        // The reasoning ends before the answer starts (a UI stops showing "thinking"): the Responses stream closed the
        // reasoning item only at the very end before (found by a user trial).
        expect(order).toEqual(["reasoning-end", "text"]);
    });

    it("a wrong key is the SDK's API call error with status 401", async () => {
        const wrong = provider === "openai"
            ? createOpenAI({baseURL: `${server.url}/v1`, apiKey: "sk-wrong"})("stories")
            : createAnthropic({baseURL: `${server.url}/v1`, apiKey: "sk-wrong"})("stories");
        await expect(generateText({model: wrong, prompt: "hi", maxOutputTokens: 4, maxRetries: 0})).rejects.toMatchObject({statusCode: 401});
    });
});
