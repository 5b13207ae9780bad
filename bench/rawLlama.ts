import { type Llama, type LlamaContext, type LlamaContextSequence, type LlamaModel, type Token, type TokenBias } from "node-llama-cpp";
import type { LlamaBuildSetting } from "../src/settings/serverSettings.js";
import { loadLlamaRuntime } from "../src/runtimes/llama/llamaRuntime.js";
import { ChatPromptRenderer } from "../src/capabilities/chat/llama/ChatPromptRenderer.js";
import { choiceSeed } from "../src/capabilities/chat/shared/choiceSeed.js";
import { createLogitBias } from "../src/capabilities/chat/llama/createLogitBias.js";
import { DecodeStepBarrier } from "../src/capabilities/chat/llama/DecodeStepBarrier.js";
import { generateChoice } from "../src/capabilities/chat/llama/generateChoice.js";
import { TokenTextDecoder } from "../src/capabilities/chat/shared/TokenTextDecoder.js";
import { llamaDetokenize } from "../src/capabilities/chat/llama/llamaTokenizerParts.js";
import type { GenerationSettings, RunResult, StreamTiming } from "./stats.js";

/** The binary the server loads (src/runtimes/llama/llamaRuntime.ts), LLAMA_BUILD as for the server. */
export function loadRawLlama(): Promise<Llama> {
    return loadLlamaRuntime({build: (process.env.LLAMA_BUILD ?? "auto") as LlamaBuildSetting, gpu: "off"});
}

/**
 * The baseline: node-llama-cpp driven directly, the way an application without the server would,
 * on a context shaped like the server's (same context size, `sequences`, threads).
 *
 * Only inputs are borrowed from src/ (prompt rendering, per-choice seed mixing, the EOS bias) so
 * both sides sample from identical prompt tokens with identical seeds and biases; none of that
 * code runs inside the timed part of `run`.
 */
export class RawLlama {
    private constructor(
        readonly model: LlamaModel,
        private readonly context: LlamaContext,
        private readonly sequences: LlamaContextSequence[]
    ) {}

    static async load(llama: Llama, modelPath: string, options: {maxContextSize: number, threads: number, sequences: number}) {
        const model = await llama.loadModel({modelPath});
        try {
            const context = await model.createContext({
                // Not beyond what the model was trained for (stories260K: 512).
                contextSize: Math.min(options.maxContextSize, model.trainContextSize),
                sequences: options.sequences,
                threads: options.threads,
                failedCreationRemedy: false
            });
            const sequences = Array.from({length: options.sequences}, () => context.getSequence());
            return new RawLlama(model, context, sequences);
        } catch (error) {
            await model.dispose();
            throw error;
        }
    }

    get contextSize() {
        return this.context.contextSize;
    }

    /** The tokens the server renders for one user message. */
    promptTokens(prompt: string): Token[] {
        return new ChatPromptRenderer(this.model).render([{role: "user", content: prompt}]);
    }

    /**
     * `streams` generations started together, one per sequence: the whole prompt goes to one
     * `evaluate` call and tokens are pulled until `maxTokens`.
     */
    async run(streams: number, settings: GenerationSettings): Promise<RunResult> {
        const promptTokens = this.promptTokens(settings.prompt);
        const tokenBias = this.eosBan(settings);
        const used = this.take(streams);
        await Promise.all(used.map((sequence) => sequence.clearHistory()));

        const start = performance.now();
        const results = await Promise.all(used.map(async (sequence, index) => {
            const generated: Token[] = [];
            let firstToken = NaN;
            let end = NaN;
            const tokens = sequence.evaluate(promptTokens, {
                temperature: settings.temperature,
                topK: 0,
                topP: settings.topP,
                minP: 0,
                seed: choiceSeed(settings.seed + index, 0),
                tokenBias,
                yieldEogToken: true
            });
            for await (const token of tokens) {
                const now = performance.now();
                if (generated.length === 0)
                    firstToken = now;
                end = now;
                if (this.model.isEogToken(token))
                    break;
                generated.push(token);
                if (generated.length >= settings.maxTokens)
                    break;
            }
            return {firstToken, end, generated};
        }));
        // Decoded after the clock stopped, with the server's decoder, only to compare the outputs.
        return {
            start,
            streams: results.map(({firstToken, end, generated}): StreamTiming => ({
                start, firstToken, end,
                completionTokens: generated.length,
                promptTokens: promptTokens.length,
                text: this.decode(promptTokens, generated)
            }))
        };
    }

    private decode(promptTokens: readonly Token[], generated: readonly Token[]) {
        const decoder = new TokenTextDecoder(llamaDetokenize(this.model), promptTokens);
        return generated.map((token) => decoder.push(token)).join("") + decoder.flush();
    }

    /**
     * Diagnostic: the server's own generation function (src/engines/llama/generateChoice.ts) on a
     * raw sequence, without HTTP (its prompt chunking, incremental detokenization, stop filter),
     * to tell engine overhead from HTTP/SSE overhead. First token = first text piece.
     */
    async runGenerateChoice(settings: GenerationSettings): Promise<StreamTiming> {
        const promptTokens = this.promptTokens(settings.prompt);
        const [sequence] = this.take(1);
        const start = performance.now();
        let firstToken = NaN;
        let text = "";
        const outcome = await generateChoice({
            model: this.model,
            sequence,
            promptTokens,
            maxTokens: settings.maxTokens,
            stop: [],
            temperature: settings.temperature,
            topP: settings.topP,
            seed: choiceSeed(settings.seed, 0),
            frequencyPenalty: 0,
            presencePenalty: 0,
            tokenBias: this.eosBan(settings),
            promptChunkSize: this.context.batchSize,
            stepBarrier: new DecodeStepBarrier(),
            signal: new AbortController().signal,
            onText: (piece) => {
                if (text === "")
                    firstToken = performance.now();
                text += piece;
            }
        });
        return {start, firstToken, end: performance.now(), completionTokens: outcome.completionTokens, promptTokens: promptTokens.length, text};
    }

    /**
     * Diagnostic, not timed: one more run of `streams` streams that counts llama_decode batches by
     * wrapping node-llama-cpp's internal native context (`_ctx.initBatch`), to see whether
     * concurrent sequences really share batches. Undefined when the internals are not there.
     */
    async countBatches(streams: number, settings: GenerationSettings): Promise<{batches: number, tokens: number} | undefined> {
        const holder = this.context as unknown as {_ctx?: {initBatch?: (size: number) => void}};
        const native = holder._ctx;
        if (native == null || typeof native.initBatch !== "function")
            return undefined;
        const sizes: number[] = [];
        holder._ctx = new Proxy(native, {
            get(target, key) {
                const value = Reflect.get(target, key);
                if (typeof value !== "function")
                    return value;
                if (key === "initBatch")
                    return (size: number) => {
                        sizes.push(size);
                        return value.call(target, size);
                    };
                return value.bind(target);
            }
        });
        try {
            await this.run(streams, settings);
        } finally {
            holder._ctx = native;
        }
        // The first batch holds the prompts; count the generation batches only.
        const generation = sizes.slice(1);
        return {batches: generation.length, tokens: generation.reduce((sum, size) => sum + size, 0)};
    }

    async dispose() {
        await this.context.dispose();
        await this.model.dispose();
    }

    private take(streams: number) {
        if (streams > this.sequences.length)
            throw new Error(`${streams} streams but only ${this.sequences.length} sequences`);
        return this.sequences.slice(0, streams);
    }

    private eosBan(settings: GenerationSettings): TokenBias | undefined {
        return createLogitBias(this.model, new Map([[settings.eosToken, -100]]));
    }
}
