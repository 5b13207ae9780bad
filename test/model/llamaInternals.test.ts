import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
    getLlama, InputLookupTokenPredictor, JinjaTemplateChatWrapper, LlamaLogLevel, TokenBias,
    type BatchItem, type LlamaContext, type LlamaModel, type Token
} from "node-llama-cpp";
import {
    assertTokenBiasMap, detachTokenPredictor, draftVerificationOf, ensureDraftContextCompatible, assertSequenceCopy, copySequenceState, jinjaRendererOf, keepFunctionResultsAsText, keepFunctionResultsRaw, keepHistoryResponsesAsGiven, keepTemplateThoughtBlocks, renderCallArgumentsUnwrapped, renderCallsThroughTemplate,
    nativeContextOf, nativeSamplerFactory, NodeLlamaInternalsError, queuedDecodesOf, unwrapNativeContext, wrapNativeContext,
    sequenceIdOf, speculationPatched, tokenBiasMap, type NativeContext
} from "../../src/runtimes/llama/internals.js";
import { tinyChatModelPath, tinyToolsModelPath } from "../support/testModels.js";

const root = path.resolve(import.meta.dirname, "../..");

/**
 * The contract between the server and node-llama-cpp's private fields (src/runtimes/llama/internals.ts), checked
 * on the installed version with the tiny generated models: after an upgrade, a failure here names the field that
 * moved (each accessor throws a NodeLlamaInternalsError naming it), before any request gets a wrong answer.
 */
describe("node-llama-cpp internals the server relies on", () => {
    let model: LlamaModel;
    let context: LlamaContext;
    beforeAll(async () => {
        const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
        model = await llama.loadModel({modelPath: tinyChatModelPath});
        context = await model.createContext({contextSize: 64, sequences: 2, threads: 1});
    });
    afterAll(async () => {
        await context?.dispose();
        await model?.dispose();
    });

    it("LlamaContext._ctx: the native context sees every batch and sampling, and its wrapped methods are called in their place", async () => {
        const native = nativeContextOf(context);
        // The native build's patch samples in the decode call itself; the prebuilt binary samples in a call of its own.
        const sampling = draftVerificationOf(context) === "native" ? ["decodeBatch with samples"] : ["decodeBatch", "sampleToken"];
        const calls: string[] = [];
        wrapNativeContext(context, (original) => ({
            initBatch: (size: number) => (calls.push("initBatch"), original.initBatch(size)),
            addToBatch: (...args: Parameters<NativeContext["addToBatch"]>) => (calls.push("addToBatch"), original.addToBatch(...args)),
            sampleToken: (...args: Parameters<NativeContext["sampleToken"]>) => (calls.push("sampleToken"), original.sampleToken(...args)),
            decodeBatch: (samples) => (calls.push(samples == null ? "decodeBatch" : "decodeBatch with samples"), original.decodeBatch(samples))
        }));
        // Still the native object, which other native calls unwrap (a sliding-window model's checkpoint takes it).
        expect(nativeContextOf(context)).toBe(native);
        const checkpoint = new (model as unknown as {_llama: {_bindings: {AddonContextSequenceCheckpoint: new () => {init(ctx: unknown, sequence: number): Promise<unknown>, dispose(): void}}}})._llama._bindings.AddonContextSequenceCheckpoint();
        await checkpoint.init(native, 0);
        checkpoint.dispose();
        try {
            const sequence = context.getSequence();
            try {
                const tokens = sequence.evaluate([1, 300, 301] as Token[], {temperature: 0});
                await tokens.next();
                await tokens.return(undefined);
            } finally {
                sequence.dispose();
            }
        } finally {
            unwrapNativeContext(context);
        }
        expect(new Set(calls)).toEqual(new Set(["initBatch", "addToBatch", ...sampling]));
        expect(Object.keys(native)).not.toContain("sampleToken");
        expect(Object.keys(native)).not.toContain("decodeBatch");
    });

    it("LlamaModel._llama._bindings.AddonSampler: a native sampler of the model's own", () => {
        const sampler = nativeSamplerFactory(model)();
        sampler.applyConfig({temperature: 0});
        sampler.dispose();
    });

    it("LlamaContextSequence._sequenceId: each sequence's id in the batch", () => {
        const [first, second] = [context.getSequence(), context.getSequence()];
        try {
            expect([sequenceIdOf(first), sequenceIdOf(second)].sort()).toEqual([0, 1]);
        } finally {
            first.dispose();
            second.dispose();
        }
    });

    it("TokenBias._biases: the map the native sampler reads", () => {
        assertTokenBiasMap(model);
        const bias = new TokenBias(model.tokenizer);
        bias.set(300 as Token, {logit: -3});
        expect(tokenBiasMap(bias).get(300)).toBe(-3);
    });

    it("LlamaContext._queuedDecodes: a batch's items are found in the queue by their token arrays", async () => {
        const found: boolean[] = [];
        let created: LlamaContext | undefined;
        const batched = created = await model.createContext({
            contextSize: 64, sequences: 2, threads: 1,
            batching: {
                itemPrioritizationStrategy: ({items, size}) => {
                    const queue = queuedDecodesOf(created);
                    const queued = new Set(queue?.map((decode) => decode.tokens as BatchItem["tokens"]));
                    found.push(queue != null && items.every((item) => queued.has(item.tokens)) &&
                        queue.every((decode) => typeof decode.sequenceId === "number"));
                    return items.map((item) => ({item, processAmount: Math.min(item.tokens.length, size)}));
                }
            }
        });
        try {
            expect(queuedDecodesOf(batched), "LlamaContext._queuedDecodes is an array").toBeInstanceOf(Array);
            const sequences = [batched.getSequence(), batched.getSequence()];
            await Promise.all(sequences.map(async (sequence, index) => {
                const tokens = sequence.evaluate([1, 300 + index, 301] as Token[], {temperature: 0});
                await tokens.next();
                await tokens.return(undefined);
            }));
        } finally {
            await batched.dispose();
        }
        expect(found.length).toBeGreaterThan(0);
        expect(found, "every batch item was in LlamaContext._queuedDecodes with its sequenceId").not.toContain(false);
    });

    it("LlamaContextSequence._tokenPredictor: taken off a sequence and put back", () => {
        const predictor = new InputLookupTokenPredictor();
        const sequence = context.getSequence({tokenPredictor: predictor});
        try {
            const reattach = detachTokenPredictor(sequence);
            expect(sequence.tokenPredictor).toBeUndefined();
            reattach();
            expect(sequence.tokenPredictor).toBe(predictor);
        } finally {
            sequence.dispose();
        }
    });

    it("LlamaContext._ctx.ensureDraftContextIsCompatibleForSpeculative: a model drafts for itself", async () => {
        const draft = await model.createContext({contextSize: 64, sequences: 2, threads: 1});
        try {
            expect(() => ensureDraftContextCompatible(context, draft)).not.toThrow();
        } finally {
            await draft.dispose();
        }
    });

    // copySequenceState's three cases share their setup: two sequences of a fresh context, a temporary state file, two texts.
    type Sequence = ReturnType<LlamaContext["getSequence"]>;
    const catText = () => model.tokenize("the cat sat on the mat and looked at the dog who ran across the big green field ".repeat(4));
    const foxText = () => model.tokenize("a quick brown fox jumps over the lazy dog while the sun goes down ".repeat(4));
    /** `run` on two sequences of a new context, with a state file path; the context and the file are gone afterwards. */
    const withTwoSequences = async (run: (first: Sequence, second: Sequence, file: string) => Promise<void>) => {
        const copyContext = await model.createContext({contextSize: 256, sequences: 2, threads: 1});
        const folder = fs.mkdtempSync(path.join(os.tmpdir(), "copy-state-"));
        try {
            await run(copyContext.getSequence(), copyContext.getSequence(), path.join(folder, "state"));
        } finally {
            await copyContext.dispose();
            fs.rmSync(folder, {recursive: true, force: true});
        }
    };
    /** The five likeliest tokens after `token` on `sequence`, with their probabilities. */
    const nextTop5 = async (sequence: Sequence, token: Token) =>
        [...(await sequence.controlledEvaluate([[token, {generateNext: {probabilities: true}}]])).at(-1)!.next.probabilities!].slice(0, 5);
    /** The same distribution, to rounding (cells evaluated in batches of other sizes). */
    const expectSameTop5 = (actual: [Token, number][], reference: [Token, number][]) => {
        expect(actual.map(([token]) => token)).toEqual(reference.map(([token]) => token));
        actual.forEach(([, probability], index) => expect(probability).toBeCloseTo(reference[index][1], 5));
    };

    it("LlamaContextSequence._copyStateFromOtherSequence: the copied cells are in place at once (a state saved right after holds them)", async () => {
        // llama.cpp moves a copy's data between per-sequence streams only at the next decode; copySequenceState makes one.
        await withTwoSequences(async (first, second, file) => {
            const a = catText(), b = foxText();
            const greedy = async (sequence: Sequence, last: Token) => {
                const out: Token[] = [];
                for await (const token of sequence.evaluate([last], {temperature: 0})) {
                    out.push(token);
                    if (out.length === 8)
                        break;
                }
                return out;
            };
            await first.evaluateWithoutGeneratingNewTokens(a.slice(0, 80));
            const reference = await greedy(first, a[80]);
            await first.clearHistory();
            await first.evaluateWithoutGeneratingNewTokens(a);
            await second.evaluateWithoutGeneratingNewTokens(b);
            expect(await copySequenceState(second, first, a.slice(0, 80))).toBe(80);
            expect(second.contextTokens).toEqual(a.slice(0, 80));
            await second.saveStateToFile(file);
            await first.clearHistory();
            await first.loadStateFromFile(file, {acceptRisk: true});
            expect(await greedy(first, a[80])).toEqual(reference);
        });
    });

    it("LlamaContextSequence._copyStateFromOtherSequence: cells a source holds past its text (a verified draft) are not kept", async () => {
        await withTwoSequences(async (first, second) => {
            const a = catText();
            await second.evaluateWithoutGeneratingNewTokens(a.slice(0, 89));
            const reference = await nextTop5(second, a[89]);
            await second.clearHistory();
            // What a speculative step leaves: cells for tokens node-llama-cpp has not handed out yet (past its text).
            await first.evaluateWithoutGeneratingNewTokens(a.slice(0, 100));
            const internals = first as unknown as {_contextTokens: Token[], _nextTokenIndex: number};
            internals._contextTokens.length = 90;
            internals._nextTokenIndex = 90;
            // All of its text: the cells past it must not cost any of it.
            expect(await copySequenceState(second, first, a.slice(0, 90))).toBe(90);
            expect(second.contextTokens).toEqual(a.slice(0, 90));
            expect(nativeContextOf(second.context) as unknown as {getSequenceKvCacheMaxPosition(id: number): number})
                .toSatisfy((native: {getSequenceKvCacheMaxPosition(id: number): number}) => native.getSequenceKvCacheMaxPosition(sequenceIdOf(second)) === 89);
            await second.eraseContextTokenRanges([{start: 89, end: 90}]);
            expectSameTop5(await nextTop5(second, a[89]), reference);
        });
    });

    it("LlamaContextSequence._copyStateFromOtherSequence: a copy that fails leaves no copy queued for a state loaded later", async () => {
        await withTwoSequences(async (first, second, file) => {
            const a = catText(), b = foxText();
            await first.evaluateWithoutGeneratingNewTokens(a.slice(0, 100));
            await second.evaluateWithoutGeneratingNewTokens(b.slice(0, 60));
            await second.saveStateToFile(file);
            const reference = await nextTop5(second, b[60]);
            // Tokens the source does not hold: nothing to keep, after llama.cpp has queued the copy of its cells.
            expect(await copySequenceState(second, first, b.slice(0, 80))).toBe(0);
            expect(second.contextTokens).toEqual([]);
            await second.loadStateFromFile(file, {acceptRisk: true});
            expectSameTop5(await nextTop5(second, b[60]), reference);
        });
    });

    it("JinjaTemplateChatWrapper.generateFunctionCallResult: where node-llama-cpp writes a call's result itself, it goes in as sent", () => {
        // Qwen3's real template without ChatPromptRenderer's `content: ""` for a calls-only message: node-llama-cpp falls
        // back to writing the call and its result into the assistant message itself.
        const template = fs.readFileSync(path.join(root, "test/fixtures/templates/Qwen-Qwen3-0.6B.jinja"), "utf8");
        const wrapper = new JinjaTemplateChatWrapper({template, joinAdjacentMessagesOfTheSameType: false});
        keepFunctionResultsAsText(wrapper);
        keepFunctionResultsRaw(wrapper);
        const {contextText} = wrapper.generateContextState({
            chatHistory: [{type: "user", text: "Weather?"}, {type: "model", response: [
                {type: "functionCall", name: "get_weather", params: {city: "Paris"}, result: "{\"sky\": \"sunny\"}", startsNewChunk: true}
            ]}],
            availableFunctions: {get_weather: {description: "The weather", params: {type: "object", properties: {city: {type: "string"}}}}}
        });
        expect(contextText.toString()).toContain("<tool_response>\n{\"sky\": \"sunny\"}\n</tool_response>");
    });

    it("JinjaTemplateChatWrapper._wrapFunctionParamsInsideMapKey: a past call's arguments go to Qwen3-Coder's template as they are", () => {
        // The real template (test/fixtures/templates) writes each argument in markup; node-llama-cpp wraps them in `params`.
        const render = (unwrap: boolean) => {
            const template = fs.readFileSync(path.join(root, "test/fixtures/templates/Qwen3-Coder.jinja"), "utf8");
            const wrapper = new JinjaTemplateChatWrapper({template, joinAdjacentMessagesOfTheSameType: false});
            if (unwrap) {
                // Once, and undone: wrapped again.
                const undo = renderCallArgumentsUnwrapped(wrapper)!;
                expect(renderCallArgumentsUnwrapped(wrapper)).toBeNull();
                undo();
                expect(renderCallArgumentsUnwrapped(wrapper)).toBeTypeOf("function");
            }
            return wrapper.generateContextState({
                chatHistory: [{type: "user", text: "Weather?"}, {type: "model", response: [
                    {type: "functionCall", name: "get_weather", params: {city: "Paris", days: 2}, result: "sunny", startsNewChunk: true}
                ]}],
                availableFunctions: {get_weather: {description: "The weather", params: {type: "object", properties: {city: {type: "string"}}}}}
            }).contextText.toString();
        };
        expect(render(false)).toContain("<parameter=params>\n{");
        expect(render(true)).toContain("<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n2\n</parameter>\n</function>");
        const qwen3 = new JinjaTemplateChatWrapper({template: fs.readFileSync(path.join(root, "test/fixtures/templates/Qwen-Qwen3-0.6B.jinja"), "utf8")});
        expect(renderCallArgumentsUnwrapped(qwen3)).toBeNull();
    });

    it("JinjaTemplateChatWrapper._usingJinjaFunctionCallTemplate and its call settings: gpt-oss's template renders tools, a past call and its result", () => {
        // The real template (test/fixtures/templates): node-llama-cpp does not recognise its call format and writes calls
        // in its own ("||call:") into the messages.
        const render = (throughTemplate: boolean) => {
            const template = fs.readFileSync(path.join(root, "test/fixtures/templates/openai-gpt-oss-120b.jinja"), "utf8");
            const wrapper = new JinjaTemplateChatWrapper({template, joinAdjacentMessagesOfTheSameType: false});
            expect(wrapper.usingJinjaFunctionCallTemplate).toBe(false);
            if (throughTemplate) {
                renderCallsThroughTemplate(wrapper, {call: {prefix: "to=functions.", paramsPrefix: "<|message|>", suffix: "<|call|>"}, result: {prefix: "", suffix: ""}});
                expect(wrapper.usingJinjaFunctionCallTemplate).toBe(true);
            }
            return wrapper.generateContextState({
                chatHistory: [{type: "user", text: "Weather?"}, {type: "model", response: [
                    {type: "functionCall", name: "get_weather", params: {city: "Paris"}, result: "sunny", startsNewChunk: true}
                ]}],
                availableFunctions: {get_weather: {description: "The weather", params: {type: "object", properties: {city: {type: "string"}}}}}
            }).contextText.toString();
        };
        expect(render(false)).toContain("||call:");
        const rendered = render(true);
        expect(rendered).toContain("type get_weather = (_: {\ncity?: string,\n}) => any;");
        expect(rendered).toContain('<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>');
        expect(rendered).toContain('<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"sunny"<|end|>');
    });

    it("JinjaTemplateChatWrapper.settings.segments.thought.openOnResponseStart: Qwen3.5's empty think block before a response of the current turn stays", () => {
        // The real template (test/fixtures/templates) writes `<think>\n\n</think>\n\n` before each response after the last user message.
        const render = (keep: boolean) => {
            const template = fs.readFileSync(path.join(root, "test/fixtures/templates/Qwen3.5-4B.jinja"), "utf8");
            const wrapper = new JinjaTemplateChatWrapper({template, joinAdjacentMessagesOfTheSameType: false});
            if (keep)
                keepTemplateThoughtBlocks(wrapper);
            return wrapper.generateContextState({chatHistory: [
                {type: "user", text: "Weather?"}, {type: "model", response: ["Let me check."]}, {type: "user", text: "And?"}, {type: "model", response: ["Sunny."]}
            ]}).contextText.toString();
        };
        expect(render(false)).toContain("<|im_start|>assistant\nSunny.");
        expect(render(true)).toContain("<|im_start|>assistant\n<think>\n\n</think>\n\nSunny.");
    });

    it("JinjaTemplateChatWrapper._transformChatHistory: a past answer goes to GLM-4.5's template as it was given", () => {
        // The real template (test/fixtures/templates): its generation prompt opens the thought, and it writes an empty
        // think block itself for a past answer that had none.
        const template = fs.readFileSync(path.join(root, "test/fixtures/templates/zai-org-GLM-4.5.jinja"), "utf8");
        const wrapper = new JinjaTemplateChatWrapper({template, joinAdjacentMessagesOfTheSameType: false});
        keepHistoryResponsesAsGiven(wrapper);
        const {contextText} = wrapper.generateContextState({chatHistory: [
            {type: "user", text: "Hi"}, {type: "model", response: ["Hello!"]}, {type: "user", text: "And?"}, {type: "model", response: []}
        ]});
        expect(contextText.toString()).toContain("<|user|>Hi<|assistant|>\n<think></think>\nHello!<|user|>And?");
    });

    it("JinjaTemplateChatWrapper._stringifyFunctionResult and ._jinjaTemplate: tool results as text, renders watched", async () => {
        const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
        const toolsModel = await llama.loadModel({modelPath: tinyToolsModelPath});
        try {
            const wrapper = new JinjaTemplateChatWrapper({
                template: String(toolsModel.fileInfo.metadata.tokenizer?.chat_template), tokenizer: toolsModel.tokenizer
            });
            expect(wrapper.usingJinjaFunctionCallTemplate).toBe(true);
            keepFunctionResultsAsText(wrapper);
            const renderer = jinjaRendererOf(wrapper);
            const rendered: {params: Record<string, unknown>, output: string}[] = [];
            const render = renderer.render.bind(renderer);
            renderer.render = (params) => {
                const output = render(params);
                rendered.push({params, output});
                return output;
            };
            wrapper.generateContextState({chatHistory: [{type: "user", text: "hi"}, {type: "model", response: []}]});
            expect(rendered.length).toBeGreaterThan(0);
            expect(rendered.at(-1)!.params).toHaveProperty("messages");
            expect(rendered.at(-1)!.output).toContain("<|im_start|>user");
        } finally {
            await toolsModel.dispose();
        }
    });
});

describe("the patch the project applies to node-llama-cpp", () => {
    it("is written for the installed version and applied (LlamaContextSequence.prototype._speculativeEvaluate)", () => {
        const installed = JSON.parse(fs.readFileSync(path.join(root, "node_modules/node-llama-cpp/package.json"), "utf8")).version;
        const patches = fs.readdirSync(path.join(root, "patches")).filter((name) => name.startsWith("node-llama-cpp+"));
        expect(patches, "patches/ holds one node-llama-cpp patch, named for the installed version").toEqual([`node-llama-cpp+${installed}.patch`]);
        expect(speculationPatched(), "LlamaContextSequence.prototype._speculativeEvaluate pushes to validatedTokens (run npm install)").toBe(true);
    });

    it("calls the native context's sampleDraft where the binary has it, and says per-position where it does not", () => {
        // What the speculative evaluation calls is read from its source: a native context with the function makes it `native`.
        const withCall = {_ctx: {initBatch: () => {}, addToBatch: () => [], decodeBatch: async () => undefined, sampleToken: async () => 0, sampleDraft: async () => null}};
        const without = {_ctx: {initBatch: () => {}, addToBatch: () => [], decodeBatch: async () => undefined, sampleToken: async () => 0}};
        expect(draftVerificationOf(withCall as never), "LlamaContextSequence.prototype._speculativeEvaluate calls _ctx.sampleDraft (run npm install)").toBe("native");
        expect(draftVerificationOf(without as never)).toBe("per-position");
    });
});

describe("a node-llama-cpp without a field the server relies on", () => {
    // What an upgrade that moved each field would make of the accessor: an error naming the field.
    const empty = {} as never;
    it.each([
        ["LlamaContext._ctx", () => nativeContextOf(empty)],
        ["LlamaModel._llama._bindings.AddonSampler", () => nativeSamplerFactory(empty)],
        ["LlamaContextSequence._sequenceId", () => sequenceIdOf(empty)],
        ["TokenBias._biases", () => tokenBiasMap(empty)],
        ["LlamaContextSequence._tokenPredictor", () => detachTokenPredictor(empty)],
        ["LlamaContext._ctx.ensureDraftContextIsCompatibleForSpeculative", () => ensureDraftContextCompatible(empty, empty)],
        ["JinjaTemplateChatWrapper._stringifyFunctionResult", () => keepFunctionResultsAsText(empty)],
        ["JinjaTemplateChatWrapper._jinjaTemplate", () => jinjaRendererOf(empty)],
        ["JinjaTemplateChatWrapper._transformChatHistory", () => keepHistoryResponsesAsGiven(empty)],
        ["JinjaTemplateChatWrapper._wrapFunctionParamsInsideMapKey", () => renderCallArgumentsUnwrapped(empty)],
        ["JinjaTemplateChatWrapper._usingJinjaFunctionCallTemplate", () => renderCallsThroughTemplate(empty, {})],
        ["LlamaContextSequence._copyStateFromOtherSequence", () => assertSequenceCopy(empty)]
    ])("names %s", (field, access) => {
        expect(access).toThrow(NodeLlamaInternalsError);
        expect(access).toThrow(field);
    });

    it("orders batches as they came when LlamaContext._queuedDecodes is gone", () => {
        expect(queuedDecodesOf({} as never)).toBeUndefined();
        expect(queuedDecodesOf(undefined)).toBeUndefined();
    });

    it("keeps the native context it could not check", () => {
        const holder = {_ctx: {initBatch: () => {}}};
        expect(() => wrapNativeContext(holder as never, () => ({}))).toThrow("LlamaContext._ctx");
        expect(holder._ctx).toEqual({initBatch: expect.any(Function)});
    });
});
