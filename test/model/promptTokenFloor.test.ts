import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlamaModel } from "node-llama-cpp";
import type { ChatTurn } from "../../src/capabilities/chat/ChatEngine.js";
import { ChatPromptRenderer } from "../../src/capabilities/chat/llama/ChatPromptRenderer.js";
import { measureTemplateFloor } from "../../src/capabilities/chat/llama/measureTemplateFloor.js";
import { PromptTokenFloor } from "../../src/capabilities/chat/llama/PromptTokenFloor.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { gpt2VocabPath, storiesModelPath, tinyChatModelPath, tinyToolsModelPath } from "../support/testModels.js";

// The floor must never exceed the real token count (it refuses prompts before tokenizing them).
const models: [string, string, boolean][] = [["stories260K (SentencePiece)", storiesModelPath, false], ["tiny chat (SentencePiece)", tinyChatModelPath, false], ["GPT-2 (byte-level BPE)", gpt2VocabPath, true]];
const loaded: LlamaModel[] = [];
afterAll(async () => {
    await Promise.all(loaded.map((model) => model.dispose()));
});

const text = fc.oneof(
    fc.string({unit: "grapheme", maxLength: 400}),
    fc.string({unit: fc.constantFrom(" ", "\n", "-", "=", "a", "e", "é", "日", "😀", "the", "    "), maxLength: 300}).map((pieces) => pieces),
    fc.nat({max: 5000}).map((length) => " ".repeat(length)),
    fc.nat({max: 2000}).map((length) => "=".repeat(length))
);

describe.each(models)("PromptTokenFloor on %s", (_, modelPath, vocabOnly) => {
    let model: LlamaModel;
    let floor: PromptTokenFloor;
    beforeAll(async () => {
        model = await (await loadLlamaRuntime({gpu: "off"})).loadModel({modelPath, vocabOnly});
        loaded.push(model);
        floor = new PromptTokenFloor(model);
    });

    it("has a bound, and never exceeds the tokenizer's own count", () => {
        expect(floor.longestPieceBytes).toBeGreaterThan(0);
        fc.assert(fc.property(fc.array(text, {minLength: 1, maxLength: 3}), (contents) => {
            const tokens = contents.reduce((sum, content) => sum + model.tokenize(content).length, 0);
            expect(floor.of({turns: contents.map((content) => ({role: "user" as const, content})), rawPrompt: null})).toBeLessThanOrEqual(tokens);
        }), {numRuns: 300, seed: 20261124});
    });

    it("refuses by length alone: 10 MB of text is far more than any context", () => {
        const tenMegabytes = "word ".repeat(2 * 1024 * 1024);
        expect(floor.of({turns: [{role: "user", content: tenMegabytes}], rawPrompt: null})).toBeGreaterThan(1024 * 1024 * 10 / floor.longestPieceBytes! - 1);
    });
});

// With a template, the floor counts each message's share of the template and the tool text the template writes;
// it must still never exceed what the renderer produces (random conversations with tools, calls, control-token text).
describe("PromptTokenFloor with the Qwen2.5 tool template", () => {
    let model: LlamaModel;
    let renderer: ChatPromptRenderer;
    let floor: PromptTokenFloor;
    beforeAll(async () => {
        model = await (await loadLlamaRuntime({gpu: "off"})).loadModel({modelPath: tinyToolsModelPath, vocabOnly: true});
        loaded.push(model);
        renderer = new ChatPromptRenderer(model);
        floor = new PromptTokenFloor(model, await measureTemplateFloor(renderer, (content) => model.tokenize(content, false, "trimLeadingSpace").length));
    });

    const content = fc.oneof(fc.constant(""), text, fc.constantFrom("<|im_start|>", "<|im_end|>\n<|im_start|>system\n", "{\"a\": 1}"));
    const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
        value: fc.oneof({depthSize: "small"}, content, fc.integer(), fc.boolean(), fc.array(tie("value"), {maxLength: 3}), fc.dictionary(content, tie("value"), {maxKeys: 3}))
    })).value;
    const call = fc.record({name: fc.constantFrom("lookup", "other"), arguments: json, result: content});
    const turn: fc.Arbitrary<ChatTurn> = fc.oneof(
        fc.record({role: fc.constantFrom("system" as const, "user" as const, "assistant" as const), content}),
        fc.record({role: fc.constant("assistant" as const), content, toolCalls: fc.array(call, {minLength: 1, maxLength: 2})})
    );
    const tool = fc.record({name: fc.constantFrom("lookup", "other", "third"), description: content, parameters: fc.record({type: fc.constant("object"), properties: fc.dictionary(content, json, {maxKeys: 3})})});

    it("measures the template: 6 tokens a message, and all tool text written", () => {
        expect(floor.of({turns: [], rawPrompt: null})).toBe(0);
        const empty = (count: number): ChatTurn[] => Array.from({length: count}, (_, index) => ({role: index % 2 === 0 ? "user" : "assistant", content: ""}));
        // 10,000 empty messages are refused by their number alone (the last, an assistant one, is the answer's start).
        expect(floor.of({turns: empty(10_000), rawPrompt: null})).toBe(6 * (9_999 - 1));
        expect(renderer.render(empty(100)).length).toBeGreaterThanOrEqual(floor.of({turns: empty(100), rawPrompt: null}));
    });

    it("lets the event loop run between the measurement's renders (a load on the main thread holds it one render at a time)", async () => {
        let renders = 0, pauses = 0, rendersWithoutPause = 0;
        const watched = new Proxy(renderer, {
            get(target, property) {
                const value = Reflect.get(target, property);
                if (property !== "render" && property !== "renderTemplate")
                    return typeof value === "function" ? value.bind(target) : value;
                return (...args: unknown[]) => {
                    renders++;
                    if (renders > pauses)
                        rendersWithoutPause++;
                    return (value as (...args: unknown[]) => unknown).apply(target, args);
                };
            }
        });
        const measured = await measureTemplateFloor(watched, (content) => model.tokenize(content, false, "trimLeadingSpace").length, async () => {
            pauses++;
        });
        expect(renders).toBeGreaterThan(40);
        expect(rendersWithoutPause).toBe(0);
        expect(new PromptTokenFloor(model, measured).of({turns: Array.from({length: 11}, () => ({role: "user" as const, content: ""})), rawPrompt: null})).toBe(6 * 10);
    });

    it("never exceeds the rendered prompt's tokens", () => {
        fc.assert(fc.property(fc.array(turn, {minLength: 1, maxLength: 8}), fc.uniqueArray(tool, {maxLength: 2, selector: (fn) => fn.name}), (turns, functions) => {
            const job = {turns, rawPrompt: null, tools: functions.length === 0 ? null : {functions, choice: {type: "auto" as const}}};
            expect(floor.of(job)).toBeLessThanOrEqual(renderer.render(turns, functions).length);
        }), {numRuns: 300, seed: 20261125});
    });

    it("counts tool text: a 1 MB tool description is far more than any context", () => {
        const description = "word ".repeat(200_000);
        const job = {turns: [{role: "user" as const, content: "hi"}], rawPrompt: null, tools: {functions: [{name: "lookup", description, parameters: {}}], choice: {type: "auto" as const}}};
        expect(floor.of(job)).toBeGreaterThan(1_000_000 / floor.longestPieceBytes! - 3);
    });
});

describe("PromptTokenFloor.forModel", () => {
    let folder: string;
    let model: LlamaModel;
    beforeAll(async () => {
        folder = fs.mkdtempSync(path.join(os.tmpdir(), "los-floor-"));
        model = await (await loadLlamaRuntime({gpu: "off"})).loadModel({modelPath: gpt2VocabPath, vocabOnly: true});
        loaded.push(model);
    });
    afterAll(() => fs.rmSync(folder, {recursive: true, force: true}));

    it("measure: the vocabulary's longest piece a slice at a time (a pause every 16,384 pieces), the same as measured at once", async () => {
        let pauses = 0;
        const measured = await PromptTokenFloor.measure(model, async () => null, async () => {
            pauses++;
        });
        const vocabulary = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
        expect(vocabulary).toBeGreaterThan(2 * 16_384);
        expect(pauses).toBe(Math.floor((vocabulary - 1) / 16_384));
        expect(measured.longestPieceBytes).toBe(new PromptTokenFloor(model).longestPieceBytes);
        expect(measured.longestPieceBytes).toBeGreaterThan(1);
    });

    it("measures a model file once across reloads, and again once the file is replaced", async () => {
        const file = path.join(folder, "model.gguf");
        fs.copyFileSync(gpt2VocabPath, file);
        let measured = 0;
        const measure = async () => {
            measured++;
            return new PromptTokenFloor(model);
        };
        const first = await PromptTokenFloor.forModel(file, "fp_a", measure);
        expect(await PromptTokenFloor.forModel(file, "fp_a", measure)).toBe(first);
        expect(measured).toBe(1);
        // Another runtime or context (another fingerprint), then the file replaced (a new modification time).
        expect(await PromptTokenFloor.forModel(file, "fp_b", measure)).not.toBe(first);
        fs.utimesSync(file, new Date(), new Date(Date.now() + 60_000));
        await PromptTokenFloor.forModel(file, "fp_a", measure);
        expect(measured).toBe(3);
    });
});
