import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadLlamaModel } from "../../src/runtimes/llama/loadLlamaModel.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { testModelsDir } from "../support/testModels.js";

// A GGUF cut short (an unfinished download or copy) reads fine, then fails in llama.cpp with node-llama-cpp's bare
// "Failed to load model": the error says the file is cut short, with its size and where its tensors end.

describe("a GGUF file cut short", () => {
    it("fails to load saying so, with both sizes; the whole file loads", async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        const whole = path.join(testModelsDir, "truncation-whole.gguf");
        const cut = path.join(testModelsDir, "truncation-cut.gguf");
        await makeTestLlamaGguf(whole, {seed: 95});
        const bytes = fs.readFileSync(whole);
        fs.writeFileSync(cut, bytes.subarray(0, bytes.length - 4096));
        const llama = await loadLlamaRuntime({gpu: "off"});
        const error = await loadLlamaModel(llama, {modelPath: cut}).then(() => null, (failure: Error) => failure);
        expect(error?.message).toMatch(new RegExp(`the file is cut short, ${bytes.length - 4096} bytes where its tensors end at ${bytes.length} `));
        const model = await loadLlamaModel(llama, {modelPath: whole});
        await model.dispose();
    });

    it("another failure is as node-llama-cpp reports it", async () => {
        const notGguf = path.join(testModelsDir, "truncation-not-gguf.gguf");
        fs.writeFileSync(notGguf, "not a gguf file at all, just text");
        const llama = await loadLlamaRuntime({gpu: "off"});
        const error = await loadLlamaModel(llama, {modelPath: notGguf}).then(() => null, (failure: Error) => failure);
        expect(error).toBeInstanceOf(Error);
        expect(error!.message).not.toMatch(/cut short/);
    });
});
