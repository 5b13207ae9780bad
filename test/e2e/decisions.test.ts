import fs from "node:fs";
import path from "node:path";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { pathSpellings } from "../support/pathSpellings.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { rawRequest } from "../support/rawRequest.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";

// /v1/decisions and /v1/systemone on generated models whose next-token distribution after the generation prompt is
// known: scripted (makeTestLlamaGguf's `script`), so the next token depends on the last token only, and the last token
// of every question's prompt is the generation prompt's line break. "certain" puts all the mass on label A after it;
// "split" gives labels A and B nearly all of it between them. The reference distribution is the same model's own
// logprobs after a line break, from /v1/completions. "split" has one sequence, so each of its batches computes one row of
// logits as the reference's does (with two sequences side by side llama.cpp's output matmul over two rows differs from
// the one-row result by about 1e-6: the position-bias and disconnect cases run on two sequences).
const certainPath = path.join(testModelsDir, "decide-certain.gguf");
const splitPath = path.join(testModelsDir, "decide-split.gguf");
// Puts all the mass on `B` after the line break, and on `7` after `B`: the two-token label B7 (questions with more options than single-token labels).
const pairedPath = path.join(testModelsDir, "decide-paired.gguf");
const vocab = ["\n", "A", "B", "C"];

describe("/v1/decisions and /v1/systemone", () => {
    let server: TestServer;
    beforeAll(async () => {
        await makeTestLlamaGguf(certainPath, {seed: 3, extraVocab: vocab, script: [["\n", "A"]]});
        await makeTestLlamaGguf(splitPath, {seed: 3, extraVocab: vocab, script: [["\n", "A"], ["\n", "B"]]});
        await makeTestLlamaGguf(pairedPath, {seed: 3, extraVocab: vocab, script: [["\n", "B"], ["B", "7"]]});
        server = await startTestServer({
            models: [
                {id: "certain", task: "chat", path: certainPath, contextSize: 1024, parallel: 2},
                {id: "split", task: "chat", path: splitPath, contextSize: 1024, parallel: 1},
                {id: "paired", task: "chat", path: pairedPath, contextSize: 2048, parallel: 1},
                {id: "no-decisions", task: "chat", path: certainPath, contextSize: 256, parallel: 1, decisions: false}
            ]
        });
    });
    afterAll(() => server?.stop());

    /** The model's probabilities of labels A, B, C after a line break, normalised over them (its top 5 logprobs: C's share is far below 1e-6). */
    const reference = async (model: string) => {
        const completion = await server.client.completions.create({model, prompt: "x\n", max_tokens: 1, logprobs: 5, temperature: 0});
        const top = completion.choices[0].logprobs!.top_logprobs![0] as Record<string, number>;
        const raw = ["A", "B", "C"].map((label) => top[label] == null ? 0 : Math.exp(top[label]));
        return (count: number) => {
            const shown = raw.slice(0, count);
            const total = shown.reduce((sum, p) => sum + p, 0);
            return shown.map((p) => p / total);
        };
    };
    const load = async (model: string) => (await jsonOf(await fetch(`${server.url}/health`))).models[model];

    it("answers all three question types through the official client, exact to 1e-6 against the model's own distribution", async () => {
        const labels = await reference("split");
        const [a2, b2] = labels(2);
        const [a3, b3, c3] = labels(3);
        expect(a2).toBeGreaterThan(0.01);
        expect(b2).toBeGreaterThan(0.01);
        const decision = await server.client.decisions.create({
            model: "split",
            input: [{role: "system", content: "You classify support tickets."}, {role: "user", content: "I was charged twice for order 4411."}],
            questions: [
                {type: "predicate", name: "refund", instructions: "The customer asks for a refund."},
                {type: "choice", name: "urgency", instructions: "How urgent is it?", choices: [{value: "low", description: "can wait"}, {value: "medium"}, {value: "high"}]},
                {type: "score", instructions: "How frustrated is the customer?", levels: [{label: "calm"}, {label: "annoyed"}, {label: "angry"}]},
                {type: "choice", instructions: "Is it about billing?", choices: [{value: true}, {value: false}]}
            ]
        });
        expect(decision.model).toBe("split");
        expect(decision.answers.map((answer) => answer.type)).toEqual(["predicate", "choice", "score", "choice"]);
        const [refund, urgency, frustration, billing] = decision.answers;
        // Given order: option i is label i; reversed: the last option is label A. Each option averages its two labels.
        const expected3 = [(a3 + c3) / 2, b3, (c3 + a3) / 2];
        if (refund.type !== "predicate" || urgency.type !== "choice" || frustration.type !== "score" || billing.type !== "choice")
            throw new Error("wrong answer types");
        expect(refund.name).toBe("refund");
        expect(refund.probability).toBeCloseTo((a2 + b2) / 2, 6);
        expect(urgency.probabilities.map((option) => option.value)).toEqual(["low", "medium", "high"]);
        urgency.probabilities.forEach((option, index) => expect(option.probability).toBeCloseTo(expected3[index], 6));
        expect(urgency.probabilities.reduce((sum, option) => sum + option.probability, 0)).toBeCloseTo(1, 9);
        expect(urgency.choice).toBe(b3 > a3 / 2 ? "medium" : "low");
        const entropy = -expected3.reduce((sum, p) => p > 0 ? sum + p * Math.log(p) : sum, 0);
        expect(urgency.confidence).toBeCloseTo(1 - entropy / Math.log(3), 6);
        expect(frustration.name).toBeNull();
        expect(frustration.probabilities).toEqual(["calm", "annoyed", "angry"].map((label, index) => ({label, value: index / 2, probability: expect.closeTo(expected3[index], 6)})));
        expect(frustration.score).toBeCloseTo(0.5 * expected3[1] + expected3[2], 6);
        // Typed choices: booleans stay booleans (a boolean beside its own text is refused: the model reads them alike).
        expect(billing.probabilities.map((option) => option.value)).toEqual([true, false]);
        expect(billing.probabilities[0].probability + billing.probabilities[1].probability).toBeCloseTo(1, 9);
        expect(decision.usage.output_tokens).toBe(0);
        expect(decision.usage.input_tokens).toBe(decision.usage.total_tokens);
        expect(decision.usage.input_tokens_details.cached_tokens + decision.usage.input_tokens_details.cache_write_tokens).toBeLessThan(decision.usage.input_tokens);

        // The same input again: its prefix comes from the prompt cache, the answers are the same.
        const again = await server.client.decisions.create({model: "split", input: [{role: "system", content: "You classify support tickets."}, {role: "user", content: "I was charged twice for order 4411."}],
            questions: [{type: "predicate", name: "refund", instructions: "The customer asks for a refund."}]});
        expect(again.usage.input_tokens_details.cached_tokens).toBeGreaterThan(20);
        expect(again.usage.input_tokens_details.cache_write_tokens).toBe(1);
        expect((again.answers[0] as {probability: number}).probability).toBeCloseTo(refund.probability, 6);
        expect(await load("split")).toMatchObject({busy: 0, waiting: 0});
    });

    it("takes tool calls and their outputs, JSON parts and developer messages as input", async () => {
        const decision = await server.client.decisions.create({
            model: "split",
            input: [
                {role: "developer", content: [{type: "input_text", text: "Check the agent's step."}]},
                {role: "user", content: [{type: "input_json", data: {order: 4411, charged: 2}}]},
                {type: "function_call", call_id: "c1", name: "refund", arguments: "{\"order\":4411}"},
                {type: "function_call_output", call_id: "c1", output: "refunded"},
                {type: "custom_tool_call", call_id: "c2", name: "shell", input: "ls"},
                {type: "custom_tool_call_output", call_id: "c2", output: [{type: "input_text", text: "orders.csv"}]}
            ],
            questions: [{type: "predicate", instructions: "The refund was the right step."}]
        });
        expect(decision.answers).toEqual([{type: "predicate", name: null, probability: expect.closeTo(0.5, 6)}]);
    });

    it("averages out position bias: a model that always answers label A gets a flat answer", async () => {
        const decision = await server.client.decisions.create({
            model: "certain", input: "The sky is green.",
            questions: [
                {type: "predicate", instructions: "The statement is true."},
                {type: "choice", instructions: "Which?", choices: [{value: "x"}, {value: "y"}]},
                {type: "choice", instructions: "Which?", choices: [{value: "x"}, {value: "y"}, {value: "z"}]}
            ]
        });
        const [predicate, two, three] = decision.answers as unknown as [{probability: number}, {confidence: number, probabilities: {probability: number}[]}, {probabilities: {probability: number}[]}];
        expect(predicate.probability).toBeCloseTo(0.5, 6);
        expect(two.probabilities.map((option) => option.probability)).toEqual([expect.closeTo(0.5, 6), expect.closeTo(0.5, 6)]);
        expect(two.confidence).toBeCloseTo(0, 6);
        // Three options: A is the first option in the given order and the last in the reversed one.
        expect(three.probabilities.map((option) => option.probability)).toEqual([expect.closeTo(0.5, 6), expect.closeTo(0, 6), expect.closeTo(0.5, 6)]);
    });

    it("takes up to 255 options: more than the single-token labels get two-token labels (letter, digit), read exactly", async () => {
        const choices = Array.from({length: 70}, (_, index) => ({value: `option ${index}`}));
        const decision = await server.client.decisions.create({model: "paired", input: "Pick one.", questions: [{type: "choice", instructions: "Which?", choices}]});
        const [answer] = decision.answers;
        if (answer.type !== "choice")
            throw new Error("wrong answer type");
        // Labels A0-A9, B0-B9, ...: B7 is option 17 in the given order and option 70 - 1 - 17 in the reversed one.
        const probabilities = answer.probabilities.map((option) => option.probability);
        expect(probabilities[17]).toBeCloseTo(0.5, 6);
        expect(probabilities[52]).toBeCloseTo(0.5, 6);
        expect(probabilities.reduce((sum, p) => sum + p, 0)).toBeCloseTo(1, 9);
        expect(answer.probabilities.map((option) => option.value)).toEqual(choices.map((choice) => choice.value));
        const most = await server.client.decisions.create({model: "paired", input: "Pick one.",
            questions: [{type: "choice", instructions: "Which?", choices: Array.from({length: 255}, (_, index) => ({value: `v${index}`}))}]});
        expect((most.answers[0] as {probabilities: unknown[]}).probabilities).toHaveLength(255);
    });

    it("answers System One's format over raw HTTP, keyed by question name", async () => {
        const labels = (await reference("split"))(3);
        const response = await rawRequest(server.url, {method: "POST", target: "/v1/systemone", headers: {"Content-Type": "application/json"}, body: JSON.stringify({
            model: "split",
            state: {message: "I was charged twice and want a refund today."},
            questions: {
                is_refund: {type: "noul", instructions: "Is the customer asking for a refund?"},
                urgency: {type: "choice", instructions: "How urgent is this?", criteria: {low: "can wait a week", high: "needs action today"}},
                frustration: {type: "score", instructions: "How frustrated is the customer?", criteria: ["calm", "mildly annoyed", "angry"]}
            }
        })});
        expect(response.status, response.body).toBe(200);
        const body = JSON.parse(response.body);
        expect(Object.keys(body.answers)).toEqual(["is_refund", "urgency", "frustration"]);
        expect(body.answers.is_refund).toEqual({type: "noul", noul: expect.closeTo(0.5, 6)});
        expect(body.answers.urgency).toMatchObject({type: "choice", probabilities: {low: expect.closeTo(0.5, 6), high: expect.closeTo(0.5, 6)}});
        const expected = [(labels[0] + labels[2]) / 2, labels[1], (labels[0] + labels[2]) / 2];
        expect(body.answers.frustration).toMatchObject({type: "score", score: expect.closeTo(expected[1] + 2 * expected[2], 6),
            probabilities: {"calm": expect.closeTo(expected[0], 6), "mildly annoyed": expect.closeTo(expected[1], 6), "angry": expect.closeTo(expected[2], 6)}});
        expect(body.usage).toEqual({input_tokens: expect.any(Number), output_tokens: 0});
        expect(body.model).toBe("split");
    });

    it("refuses bad requests with a 400 naming the field in OpenAI's words", async () => {
        const errorOf = async (target: string, body: Record<string, unknown>) => {
            const response = await server.post(target, body);
            return {status: response.status, error: (await jsonOf(response)).error};
        };
        const predicate = {type: "predicate", instructions: "a"};
        const base = {model: "split", input: "x"};
        expect(await errorOf("/v1/decisions", {...base, questions: [predicate, predicate, predicate, {type: "choice", instructions: "b", choices: [{value: "only"}]}]}))
            .toMatchObject({status: 400, error: {type: "invalid_request_error", param: "questions[3].choices"}});
        expect(await errorOf("/v1/decisions", {...base, questions: [{type: "choice", instructions: "b", choices: [{value: "x"}, {value: "x"}]}]}))
            .toMatchObject({status: 400, error: {param: "questions[0].choices[1].value"}});
        expect(await errorOf("/v1/decisions", {...base, questions: [{type: "choice", instructions: "b", choices: Array.from({length: 256}, (_, index) => ({value: `v${index}`}))}]}))
            .toMatchObject({status: 400, error: {param: "questions[0].choices"}});
        expect(await errorOf("/v1/decisions", {...base, questions: []})).toMatchObject({status: 400, error: {param: "questions"}});
        expect(await errorOf("/v1/decisions", {...base, questions: Array.from({length: 401}, () => predicate)})).toMatchObject({status: 400, error: {param: "questions"}});
        expect(await errorOf("/v1/decisions", {model: "split", input: [{role: "user", content: [{type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}]}], questions: [predicate]}))
            .toMatchObject({status: 400, error: {param: "input[0].content[0]", code: "model_not_multimodal"}});
        expect(await errorOf("/v1/decisions", {...base, input: "word ".repeat(1200), questions: [predicate]}))
            .toMatchObject({status: 400, error: {param: "input", code: "context_length_exceeded"}});
        expect(await errorOf("/v1/decisions", {...base, model: "no-decisions", questions: [predicate]})).toMatchObject({status: 400, error: {param: "model"}});
        expect(await errorOf("/v1/systemone", {model: "split", state: "x", questions: {tone: {type: "score", instructions: "b", criteria: {a: 1}}}}))
            .toMatchObject({status: 400, error: {param: "questions.tone.criteria"}});
        // Found by a new user's trial: a choice or score without its list was a 500; an error inside an input item named
        // all of `input` ("expected a string"); a repeated level, and a boolean choice beside its text, were taken.
        expect(await errorOf("/v1/decisions", {...base, questions: [{type: "choice", instructions: "b"}]}))
            .toMatchObject({status: 400, error: {type: "invalid_request_error", param: "questions[0].choices"}});
        expect(await errorOf("/v1/decisions", {...base, questions: [predicate, {type: "score", instructions: "b"}]}))
            .toMatchObject({status: 400, error: {param: "questions[1].levels"}});
        expect(await errorOf("/v1/decisions", {...base, input: [{role: "user", content: [{type: "text", text: "x"}]}], questions: [predicate]}))
            .toMatchObject({status: 400, error: {param: "input[0].content[0].type", message: expect.stringContaining("input_text") as unknown}});
        expect(await errorOf("/v1/decisions", {...base, input: [{role: "tool", content: "x"}], questions: [predicate]}))
            .toMatchObject({status: 400, error: {param: "input[0].role"}});
        expect(await errorOf("/v1/decisions", {...base, input: [], questions: [predicate]}))
            .toMatchObject({status: 400, error: {param: "input", message: expect.stringContaining("minimum length 1") as unknown}});
        expect(await errorOf("/v1/decisions", {...base, questions: [{type: "choice", instructions: "b", choices: [{value: true}, {value: "true"}]}]}))
            .toMatchObject({status: 400, error: {param: "questions[0].choices[1].value"}});
        expect(await errorOf("/v1/decisions", {...base, questions: [{type: "score", instructions: "b", levels: [{label: "a"}, {label: "a"}]}]}))
            .toMatchObject({status: 400, error: {param: "questions[0].levels[1].label"}});
        expect(await errorOf("/v1/systemone", {model: "split", state: "x", questions: {tone: {type: "score", instructions: "b", criteria: ["a", "b", "a"]}}}))
            .toMatchObject({status: 400, error: {param: "questions.tone.criteria"}});
        // Found by review: a description can make two options read alike, and so can Unicode's two spellings of a letter.
        expect(await errorOf("/v1/decisions", {...base, questions: [{type: "choice", instructions: "b", choices: [{value: "a: b"}, {value: "a", description: "b"}]}]}))
            .toMatchObject({status: 400, error: {param: "questions[0].choices[1].description"}});
        expect(await errorOf("/v1/decisions", {...base, questions: [{type: "choice", instructions: "b", choices: [{value: "caf\u00e9"}, {value: "cafe\u0301"}]}]}))
            .toMatchObject({status: 400, error: {param: "questions[0].choices[1].value"}});
        expect(await errorOf("/v1/systemone", {model: "split", state: "x", questions: {tone: {type: "score", instructions: "b", criteria: ["caf\u00e9", "cafe\u0301"]}}}))
            .toMatchObject({status: 400, error: {param: "questions.tone.criteria"}});
        const described = await errorOf("/v1/systemone", {model: "split", state: "x", questions: {q: {type: "noul", instructions: "a"}, tone: {type: "choice", instructions: "b", criteria: {"a: b": null, a: "b"}}}});
        expect(described).toMatchObject({status: 400, error: {param: "questions.tone.criteria"}});
        expect(described.error.message).not.toContain("questions[");
        expect(await load("split")).toMatchObject({busy: 0, waiting: 0});
    });

    it("/metrics counts the requests and their input tokens by route", async () => {
        const families = parsePrometheusTextFormat(await (await fetch(`${server.url}/metrics`)).text());
        const sum = (name: string, labels: Record<string, string>) => families.find((family) => family.name === name)!.metrics
            .filter((metric) => "labels" in metric && Object.entries(labels).every(([key, value]) => metric.labels![key] === value))
            .reduce((total, metric) => total + Number((metric as {value: string}).value), 0);
        expect(sum("los_requests_total", {endpoint: "/v1/decisions", status: "200"})).toBeGreaterThanOrEqual(3);
        expect(sum("los_requests_total", {endpoint: "/v1/decisions", status: "400"})).toBeGreaterThanOrEqual(7);
        expect(sum("los_requests_total", {endpoint: "/v1/systemone", status: "200"})).toBeGreaterThanOrEqual(1);
        expect(sum("los_tokens_total", {endpoint: "/v1/decisions", direction: "prompt"})).toBeGreaterThan(100);
    });

    it("a long input is evaluated once: the second sequence copies it (los_prompt_cache_copied_tokens_total), the answers unchanged", async () => {
        const copied = async () => {
            const families = parsePrometheusTextFormat(await (await fetch(`${server.url}/metrics`)).text());
            const family = families.find((entry) => entry.name === "los_prompt_cache_copied_tokens_total")!;
            return Number((family.metrics.find((metric) => "labels" in metric && metric.labels!.model === "certain") as {value: string}).value);
        };
        const before = await copied();
        // The questions' suffixes outweigh the input: the request takes both sequences (decideQuestions).
        const input = Array.from({length: 10}, (_, index) => `line ${index} of a ticket`).join("\n");
        const questions = Array.from({length: 12}, (_, index) => ({type: "predicate" as const, instructions: `Question ${index}?`}));
        const decision = await server.client.decisions.create({model: "certain", input, questions});
        expect(decision.usage.input_tokens_details.cached_tokens).toBeLessThan(32);
        // The prefix (the input through the template), copied into the second sequence instead of evaluated there.
        expect(await copied() - before).toBeGreaterThan(100);
        for (const answer of decision.answers)
            expect((answer as {probability: number}).probability).toBeCloseTo(0.5, 6);
    });

    it("a client that disconnects stops its questions and frees the sequences", async () => {
        const controller = new AbortController();
        const questions = Array.from({length: 400}, (_, index) => ({type: "choice", instructions: `Question ${index}?`, choices: [{value: "x"}, {value: "y"}, {value: "z"}]}));
        const pending = server.post("/v1/decisions", {model: "certain", input: "Some input.", questions}, {signal: controller.signal}).catch((error: Error) => error);
        // A bound, not a measurement: the suffixes are tokenized (in the render thread, started for it) before the sequences are taken.
        expect(await eventually(async () => (await load("certain")).busy > 0, 60_000)).toBe(true);
        controller.abort();
        expect(await pending).toBeInstanceOf(Error);
        expect(await eventually(async () => (await load("certain")).busy === 0)).toBe(true);
        const after = await server.client.decisions.create({model: "certain", input: "Some input.", questions: [{type: "predicate", instructions: "x"}]});
        expect((after.answers[0] as {probability: number}).probability).toBeCloseTo(0.5, 6);
    });
});

describe("a model its manifest keeps from decisions, not loaded; a template that refuses the input", () => {
    let server: TestServer;
    const gemmaPath = path.join(testModelsDir, "decisions-gemma2.gguf");
    beforeAll(async () => {
        await makeTestLlamaGguf(certainPath, {seed: 3, extraVocab: vocab, script: [["\n", "A"]]});
        await makeTestLlamaGguf(gemmaPath, {seed: 3, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "google-gemma-2-2b-it.jinja"), "utf8")});
        server = await startTestServer({models: [
            {id: "no-decisions", task: "chat", path: certainPath, contextSize: 256, parallel: 1, decisions: false},
            {id: "gemma2", task: "chat", path: gemmaPath, contextSize: 512, parallel: 1}
        ], config: {preloadAll: false}});
    });

    it("a conversation the template refuses (Gemma 2's roles must alternate) names input, the field decisions have", async () => {
        const response = await server.post("/v1/decisions", {model: "gemma2", input: [{role: "assistant", content: "Hello."}, {role: "user", content: "Hi."}],
            questions: [{type: "predicate", instructions: "a"}]});
        expect(response.status).toBe(400);
        expect((await jsonOf(response)).error).toMatchObject({param: "input", code: "invalid_conversation", message: expect.stringContaining("alternate") as unknown});
    });
    afterAll(() => server?.stop());

    it("is refused (400 naming model) without being loaded for it", async () => {
        const response = await server.post("/v1/decisions", {model: "no-decisions", input: "x", questions: [{type: "predicate", instructions: "a"}]});
        expect(response.status).toBe(400);
        expect((await jsonOf(response)).error).toMatchObject({param: "model", code: "model_not_supported"});
        const listed = (await jsonOf(await fetch(`${server.url}/v1/models`))).data as {id: string, status: {value: string}}[];
        expect(listed.find((entry) => entry.id === "no-decisions")!.status.value).toBe("unloaded");
    });
});

describe("a model whose sequences are all taken and whose queue is full", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({models: [{id: "certain", task: "chat", path: certainPath, contextSize: 1024, parallel: 2}], config: {queueSize: 0}});
    });
    afterAll(() => server?.stop());

    it("answers a decision 503 with Retry-After, in OpenAI's shape, and the next one once the first has gone", async () => {
        // 400 questions of 60 options outweigh their short input: the request takes both sequences (decideQuestions) and
        // holds them for 800 suffixes of ~250 tokens (minutes on this model), until the test lets it go.
        const controller = new AbortController();
        const choices = Array.from({length: 60}, (_, index) => ({value: `option ${index}`}));
        const questions = Array.from({length: 400}, (_, index) => ({type: "choice", instructions: `Question ${index}?`, choices}));
        const pending = server.post("/v1/decisions", {model: "certain", input: "Some input.", questions}, {signal: controller.signal}).catch((error: Error) => error);
        // A bound, not a measurement: the 800 suffixes are tokenized (in the render thread, started for it) before the sequences are taken.
        expect(await eventually(async () => (await jsonOf(await fetch(`${server.url}/health`))).models.certain.busy === 2, 60_000)).toBe(true);
        const refused = await server.post("/v1/decisions", {model: "certain", input: "x", questions: [{type: "predicate", instructions: "y"}]});
        expect(refused.status).toBe(503);
        expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
        expect((await jsonOf(refused)).error).toMatchObject({type: expect.any(String), message: expect.stringContaining("certain")});
        controller.abort();
        await pending;
        expect(await eventually(async () => (await jsonOf(await fetch(`${server.url}/health`))).models.certain.busy === 0)).toBe(true);
        const after = await server.client.decisions.create({model: "certain", input: "x", questions: [{type: "predicate", instructions: "y"}]});
        expect(after.answers).toHaveLength(1);
    });
});

describe("the decision routes behind the API key", () => {
    let server: TestServer;
    const key = {Authorization: "Bearer sk-decide-1", "Content-Type": "application/json"};
    beforeAll(async () => {
        server = await startTestServer({models: [{id: "fake", task: "chat", path: certainPath}], config: {apiKeys: ["sk-decide-1"]},
            factories: {chat: async () => new FakeChatEngine("fake", {pieces: []})}});
    });
    afterAll(() => server?.stop());

    it("a user key calls them, however their path is spelled; no key or a wrong one cannot", async () => {
        const bodies: Record<string, string> = {
            "/v1/decisions": JSON.stringify({model: "fake", input: "x", questions: [{type: "predicate", instructions: "y"}]}),
            "/v1/systemone": JSON.stringify({model: "fake", state: "x", questions: {y: {type: "noul", instructions: "y"}}})
        };
        for (const [route, body] of Object.entries(bodies))
            for (const target of pathSpellings(route)) {
                // A spelling the router takes answers with the key and is 401 without it; any other is refused either way.
                const withKey = await rawRequest(server.url, {method: "POST", target, headers: key, body});
                expect([200, 400, 404], `${target}: ${withKey.body}`).toContain(withKey.status);
                const without = await rawRequest(server.url, {method: "POST", target, headers: {"Content-Type": "application/json"}, body});
                const wrong = await rawRequest(server.url, {method: "POST", target, headers: {...key, Authorization: "Bearer sk-decide-2"}, body});
                for (const refused of [without, wrong])
                    expect(withKey.status === 200 ? [401] : [400, 401, 404], target).toContain(refused.status);
                if (withKey.status === 200)
                    expect(JSON.parse(withKey.body).answers, target).toBeDefined();
            }
        const answered = await rawRequest(server.url, {method: "POST", target: "/v1/decisions", headers: key, body: bodies["/v1/decisions"]});
        expect(JSON.parse(answered.body).answers).toEqual([{type: "predicate", name: null, probability: 0.5}]);
    });
});
