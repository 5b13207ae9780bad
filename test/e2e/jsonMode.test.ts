import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { storiesModelPath, tinyChatModelPath, tinyPlainModelPath } from "../support/testModels.js";

// JSON mode on random-weight models: whatever the model "wants", the grammar only lets it write
// a JSON object, so a finished (`stop`) answer must always parse. A logit bias towards the
// closing characters makes these models finish objects often enough to check many of them.

/** Token ids of `}`, `]` and `"` in a model, to nudge it towards closing what it opened. */
async function closingBias(modelPath: string, strength: number) {
    const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
    const model = await llama.loadModel({modelPath, vocabOnly: true});
    const bias: Record<string, number> = {};
    for (const text of ["}", "]", "\""])
        for (const token of model.tokenize(text, false, "trimLeadingSpace"))
            bias[String(token)] = strength;
    await model.dispose();
    return bias;
}
describe("response_format json_object", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({
            models: [
                {id: "tiny", task: "chat", path: tinyChatModelPath, contextSize: 1024, parallel: 2},
                {id: "plain", task: "chat", path: tinyPlainModelPath, contextSize: 1024, parallel: 2},
                ...[{id: "stories", task: "chat", path: storiesModelPath, contextSize: 1024, parallel: 2}]
            ]
        });
    });
    afterAll(() => server.stop());

    // stories260K loves to keep telling its story inside a string: it needs a stronger nudge.
    const models: [string, string, number][] = [
        ["tiny", tinyChatModelPath, 4], ["plain", tinyPlainModelPath, 4],
        ...[["stories", storiesModelPath, 8] as [string, string, number]]
    ];

    it.each(models)("%s: every finished answer over 20 seeds is a JSON object", async (model, modelPath, strength) => {
        const logit_bias = await closingBias(modelPath, strength);
        let finished = 0;
        for (let seed = 0; seed < 20; seed++) {
            const completion = await server.client.chat.completions.create({
                model, seed, temperature: 1, max_tokens: 120, n: 2, logit_bias,
                response_format: {type: "json_object"},
                messages: [{role: "user", content: "Reply in JSON."}]
            });
            for (const choice of completion.choices) {
                const content = choice.message.content!;
                expect(content.startsWith("{")).toBe(true);
                if (choice.finish_reason === "stop") {
                    finished++;
                    const value = JSON.parse(content);
                    expect(typeof value).toBe("object");
                    expect(Array.isArray(value)).toBe(false);
                    expect(value).not.toBeNull();
                }
                // Bounded whitespace: never more than a newline and 20 indentation characters in a row.
                expect(content).not.toMatch(/\s{23}/);
            }
        }
        // Random models write long strings, but a fair share must close their object in time.
        expect(finished).toBeGreaterThanOrEqual(10);
    }, 120_000);

    it("streams JSON mode the same way", async () => {
        const response = await server.post("/v1/chat/completions", {
            model: "tiny", seed: 4, temperature: 1, max_tokens: 300, stream: true,
            response_format: {type: "json_object"}, messages: [{role: "user", content: "json please"}]
        });
        const {events} = await readSse(response);
        const chunks = events.slice(0, -1).map((event) => JSON.parse(event.data));
        const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("");
        const whole = await server.client.chat.completions.create({
            model: "tiny", seed: 4, temperature: 1, max_tokens: 300,
            response_format: {type: "json_object"}, messages: [{role: "user", content: "json please"}]
        });
        expect(text).toBe(whole.choices[0].message.content);
    });

    it("banning every token the grammar allows cannot hang or crash a request: the grammar wins", async () => {
        // Once the object is closed only end-of-generation tokens are allowed, and both are banned here.
        const logit_bias = {...await closingBias(tinyChatModelPath, 4), "2": -100, "4": -100};
        for (let seed = 0; seed < 6; seed++) {
            const completion = await server.client.chat.completions.create({
                model: "tiny", seed, temperature: 1, max_tokens: 120, logit_bias,
                response_format: {type: "json_object"}, messages: [{role: "user", content: "json"}]
            });
            const choice = completion.choices[0];
            if (choice.finish_reason === "stop")
                expect(typeof JSON.parse(choice.message.content!)).toBe("object");
        }
        expect((await fetch(`${server.url}/health`)).status).toBe(200);
    });

    it("response_format text is plain generation", async () => {
        const completion = await server.client.chat.completions.create({
            model: "tiny", seed: 1, max_tokens: 5, response_format: {type: "text"}, messages: [{role: "user", content: "hi"}]
        });
        expect(completion.choices[0].finish_reason).toBe("length");
    });
});
