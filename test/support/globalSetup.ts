import fs from "node:fs";
import { makeTestLlamaGguf, toolCallVocab, toolsChatTemplate } from "./gguf/makeTestLlamaGguf.js";
import { makeTestBertOnnx } from "./onnx/makeTestBertOnnx.js";
import { makeTestKokoroOnnx } from "./onnx/makeTestKokoroOnnx.js";
import { makeTestVitsOnnx } from "./onnx/makeTestVitsOnnx.js";
import { testModelsDir, tinyBertPath, tinyChatModelPath, tinyKokoroPath, tinyPlainModelPath, tinyToolsModelPath, tinyVitsPath } from "./testModels.js";

/** Writes the generated test models once per test run (a few tens of milliseconds). */
export default async function globalSetup() {
    fs.mkdirSync(testModelsDir, {recursive: true});
    await makeTestLlamaGguf(tinyChatModelPath, {seed: 1});
    await makeTestLlamaGguf(tinyPlainModelPath, {seed: 1, chatTemplate: null});
    await makeTestLlamaGguf(tinyToolsModelPath, {seed: 1, chatTemplate: toolsChatTemplate, extraVocab: toolCallVocab});
    makeTestBertOnnx(tinyBertPath, {seed: 1, hiddenSize: 32, maxPositions: 64});
    makeTestKokoroOnnx(tinyKokoroPath, {seed: 1});
    makeTestVitsOnnx(tinyVitsPath, {seed: 2});
}
