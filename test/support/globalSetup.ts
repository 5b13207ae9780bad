import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { makeTestLlamaGguf, toolCallVocab, toolsChatTemplate } from "./gguf/makeTestLlamaGguf.js";
import { makeTestBertRerankerGguf } from "./gguf/makeTestBertRerankerGguf.js";
import { makeTestBertOnnx } from "./onnx/makeTestBertOnnx.js";
import { makeTestKokoroOnnx } from "./onnx/makeTestKokoroOnnx.js";
import { makeTestSdModel } from "./onnx/makeTestSdModel.js";
import { makeTestVitsOnnx } from "./onnx/makeTestVitsOnnx.js";
import { makeTestWhisperOnnx } from "./onnx/makeTestWhisperOnnx.js";
import { makeTestSmolVlmOnnx } from "./onnx/makeTestSmolVlmOnnx.js";
import { writeRealTemplateModels } from "./realTemplateModels.js";
import { testModelsDir, tinyBertPath, tinyChatModelPath, tinyCrossEncoderPath, tinyRerankerGgufPath, tinyKokoroPath, tinySdFloatTimestepPath, tinySdFp16Path, tinySdLcmPath, tinySdPath, tinySmolVlmEndlessPath, tinySmolVlmPath, tinyPlainModelPath, tinyToolsModelPath, tinyVitsPath, tinyWhisperEnglishPath, tinyWhisperPath, tinyWhisperVariantPaths } from "./testModels.js";

const debugLogs = () => new Set(fs.readdirSync(os.tmpdir()).filter((name) => /^mat-debug-\d+\.log$/.test(name)));

/**
 * Writes the generated test models once per test run (a few tens of milliseconds). Returns the
 * teardown, which removes the empty `mat-debug-<pid>.log` files ONNX Runtime's telemetry created in
 * /tmp for the test processes (see removeOnnxRuntimeDebugLog), so a test run leaves nothing there.
 */
export default async function globalSetup() {
    const before = debugLogs();
    // The servers the tests spawn run TypeScript through tsx, whose compile cache would stay in /tmp.
    process.env.TSX_DISABLE_CACHE = "1";
    // The compiled server the tests spawn (spawnServer) and `npm start` runs, built (when older than the sources) in
    // another process while the models are written.
    const built = buildServer();
    fs.mkdirSync(testModelsDir, {recursive: true});
    await makeTestLlamaGguf(tinyChatModelPath, {seed: 1});
    await makeTestLlamaGguf(tinyPlainModelPath, {seed: 1, chatTemplate: null});
    await makeTestLlamaGguf(tinyToolsModelPath, {seed: 1, chatTemplate: toolsChatTemplate, extraVocab: toolCallVocab});
    await writeRealTemplateModels();
    makeTestBertOnnx(tinyBertPath, {seed: 1, hiddenSize: 32, maxPositions: 64});
    makeTestBertOnnx(tinyCrossEncoderPath, {seed: 2, hiddenSize: 32, maxPositions: 64, crossEncoder: true});
    await makeTestBertRerankerGguf(tinyRerankerGgufPath, {seed: 1, contextLength: 128});
    makeTestSdModel(tinySdPath, {seed: 1});
    makeTestSdModel(tinySdFloatTimestepPath, {seed: 1, timestep: "float", tokenizerJson: true});
    makeTestSdModel(tinySdFp16Path, {seed: 1, precision: "fp16", timestep: "float", inputIds: "int64", tokenizerJson: true, configs: false});
    makeTestSdModel(tinySdLcmPath, {seed: 1, timestep: "scalar", timestepCond: 16});
    makeTestKokoroOnnx(tinyKokoroPath, {seed: 1});
    makeTestVitsOnnx(tinyVitsPath, {seed: 2});
    makeTestWhisperOnnx(tinyWhisperPath, {seed: 3});
    makeTestSmolVlmOnnx(tinySmolVlmPath, {seed: 5});
    makeTestSmolVlmOnnx(tinySmolVlmEndlessPath, {seed: 5, endless: true});
    makeTestWhisperOnnx(tinyWhisperEnglishPath, {seed: 4, multilingual: false, crossAttentions: false});
    makeTestWhisperOnnx(tinyWhisperVariantPaths.looping, {seed: 3, maxTargetPositions: 128});
    makeTestWhisperOnnx(tinyWhisperVariantPaths.silent, {seed: 3, noSpeechBias: 20, outputScale: 0.5});
    makeTestWhisperOnnx(tinyWhisperVariantPaths.wordy, {seed: 3, spaceAfterLetter: 15});
    await built;
    return () => {
        for (const name of debugLogs()) {
            const file = path.join(os.tmpdir(), name);
            if (!before.has(name) && fs.statSync(file).size === 0)
                fs.rmSync(file, {force: true});
        }
    };
}

/** `npm start`'s build step (scripts/buildIfStale.mjs: tsc into dist/ when it is missing or older than the sources). */
function buildServer(): Promise<void> {
    const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
    const child = spawn(process.execPath, [path.join(projectRoot, "scripts/buildIfStale.mjs")], {cwd: projectRoot, stdio: ["ignore", "pipe", "pipe"]});
    let output = "";
    child.stdout!.on("data", (data) => output += data);
    child.stderr!.on("data", (data) => output += data);
    return new Promise((resolve, reject) => child.on("exit", (code) => code === 0 ? resolve() : reject(new Error(`The server's build failed (exit ${code}):\n${output}`))));
}
