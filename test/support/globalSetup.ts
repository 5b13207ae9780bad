import fs from "node:fs";
import { makeTestLlamaGguf, toolCallVocab, toolsChatTemplate } from "./gguf/makeTestLlamaGguf.js";
import { makeTestBertOnnx } from "./onnx/makeTestBertOnnx.js";
import { testModelsDir, tinyBertPath, tinyChatModelPath, tinyPlainModelPath, tinyToolsModelPath } from "./testModels.js";

/** Writes the generated test models once per test run (a few tens of milliseconds). */
export default async function globalSetup() {
    fs.mkdirSync(testModelsDir, {recursive: true});
    await makeTestLlamaGguf(tinyChatModelPath, {seed: 1});
    await makeTestLlamaGguf(tinyPlainModelPath, {seed: 1, chatTemplate: null});
    await makeTestLlamaGguf(tinyToolsModelPath, {seed: 1, chatTemplate: toolsChatTemplate, extraVocab: toolCallVocab});
    makeTestBertOnnx(tinyBertPath, {seed: 1, hiddenSize: 32, maxPositions: 64});
}
