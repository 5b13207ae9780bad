import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { getLlama, type LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fimTokens, makeTestLlamaGguf, testLlamaTokens } from "../support/gguf/makeTestLlamaGguf.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";

/** The token counts of a usage (the prompt cache's `prompt_tokens_details` varies with what ran before). */
const counts = ({prompt_tokens, completion_tokens, total_tokens}: {prompt_tokens: number, completion_tokens: number, total_tokens: number}) =>
    ({prompt_tokens, completion_tokens, total_tokens});

// `suffix` on a (random-weight) model whose vocabulary has fill-in-the-middle tokens.
describe("/v1/completions fill in the middle (suffix)", () => {
    let dir: string;
    let server: TestServer;
    let model: LlamaModel;
    beforeAll(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-fim-"));
        const modelPath = path.join(dir, "tiny-fim.gguf");
        await makeTestLlamaGguf(modelPath, {seed: 1, chatTemplate: null, fillInTheMiddle: true});
        model = await (await getLlama({gpu: false})).loadModel({modelPath, vocabOnly: true});
        server = await startTestServer({models: [{id: "tiny-fim", task: "chat", path: modelPath, contextSize: 256, parallel: 2, threads: 1}]});
    });
    afterAll(async () => {
        await server?.stop();
        await model?.dispose();
        fs.rmSync(dir, {recursive: true, force: true});
    });

    const complete = async (fields: Record<string, unknown>) => {
        const response = await server.post("/v1/completions", {model: "tiny-fim", temperature: 0, max_tokens: 8, ...fields});
        return {status: response.status, body: await jsonOf(response)};
    };

    it("the test model's FIM tokens are recognised by llama.cpp", () => {
        const ids = fimTokens.map(([, text]) => model.tokenize(text, true)[0]);
        expect([model.tokens.infill.prefix, model.tokens.infill.suffix, model.tokens.infill.middle]).toEqual(ids);
    });

    it("prompt + suffix is the prefix-suffix-middle prompt: the same completion as those tokens given as ids", async () => {
        const prefix = "def add(a, b):\n    return";
        const suffix = "\n\nprint(add(1, 2))";
        const {prefix: pre, suffix: suf, middle: mid} = model.tokens.infill;
        const tokens = [testLlamaTokens.bos.id, pre, ...model.tokenize(prefix, false, "trimLeadingSpace"), suf,
            ...model.tokenize(suffix, false, "trimLeadingSpace"), mid];

        const filled = await complete({prompt: prefix, suffix});
        expect(filled.status).toBe(200);
        const asTokens = await complete({prompt: tokens});
        expect(counts(filled.body.usage)).toEqual(counts(asTokens.body.usage));
        expect(filled.body.usage.prompt_tokens).toBe(tokens.length);
        expect(filled.body.choices[0].text).toBe(asTokens.body.choices[0].text);
        expect(filled.body.choices[0].text.length).toBeGreaterThan(0);

        // Without the suffix the prompt is plain text, a different prompt.
        const plain = await complete({prompt: prefix});
        expect(plain.body.usage.prompt_tokens).not.toBe(tokens.length);
    });

    it("an empty suffix is no suffix; echo cannot go with a suffix", async () => {
        const plain = await complete({prompt: "Once upon a time"});
        const emptySuffix = await complete({prompt: "Once upon a time", suffix: ""});
        expect(counts(emptySuffix.body.usage)).toEqual(counts(plain.body.usage));
        expect(emptySuffix.body.choices[0].text).toBe(plain.body.choices[0].text);
        expect(await complete({prompt: "x", suffix: "y", echo: true})).toMatchObject({status: 400, body: {error: {param: "echo"}}});
    });
});
