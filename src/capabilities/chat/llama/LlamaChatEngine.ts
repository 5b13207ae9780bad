import { LlamaGrammar, type Llama, type LlamaContext, type LlamaContextSequence, type LlamaModel, type Token, type TokenBias } from "node-llama-cpp";
import type { ChatEngine, ChatEngineInfo, ChatJob, DecisionJob, DecisionOutcome, ChatRun, ChatRunHooks, ChatToolFunction, ChoiceResult, RawPrompt, ReasoningFormat, TokenizeInput, Tokenized } from "../ChatEngine.js";
import type { EngineLoad } from "../../../core/engines/EngineLoad.js";
import { ContextLengthExceededError } from "../errors/ContextLengthExceededError.js";
import { EmptyPromptError } from "../errors/EmptyPromptError.js";
import { EngineDisposedError } from "../../../core/engines/EngineDisposedError.js";
import { InvalidJsonSchemaError } from "../errors/InvalidJsonSchemaError.js";
import { TooManyChoicesError } from "../errors/TooManyChoicesError.js";
import { AdmissionQueue } from "../../../core/admission/AdmissionQueue.js";
import { ChatPromptRenderer } from "./ChatPromptRenderer.js";
import { DecodeStepBarrier } from "./DecodeStepBarrier.js";
import { assertLogitBiasSupported, createLogitBias } from "./createLogitBias.js";
import { choiceSeed } from "./choiceSeed.js";
import { generateChoice, type ChoiceSettings } from "./generateChoice.js";
import { RawDistributionTap } from "./RawDistributionTap.js";
import { TokenBytes } from "./TokenBytes.js";
import { PromptTokenFloor } from "./PromptTokenFloor.js";
import { jsonObjectGrammar } from "./jsonObjectGrammar.js";
import { createJsonSchemaGrammar } from "./jsonSchemaGrammar.js";
import { promptEcho } from "./promptEcho.js";
import { ChoiceOutput, type ToolCallPlan } from "./ChoiceOutput.js";
import { toolCallGrammarText } from "./toolCallGrammar.js";
import { runtimeIdentity } from "../../../runtimes/llama/llamaRuntime.js";
import { describeGpu, type GpuDescription } from "../../../runtimes/llama/describeGpu.js";
import { sequenceOrderedBatching } from "./sequenceOrderedBatching.js";
import { SequencePrefixCache, type PromptCacheMode } from "./SequencePrefixCache.js";
import { wholeChunkTokens } from "./promptChunks.js";
import { systemFingerprint } from "../../../runtimes/llama/systemFingerprint.js";
import { isSmallPrompt } from "./isSmallPrompt.js";
import { measureTemplateFloor } from "./measureTemplateFloor.js";
import { preparePrompt, type PreparedPrompt, type PromptRequest } from "./preparePrompt.js";
import { PromptRenderThread } from "./PromptRenderThread.js";
import { LlamaTokenizer } from "./LlamaTokenizer.js";
import { detectReasoningFormat } from "./detectReasoningFormat.js";
import type { SpeculativeOptions } from "./speculation/SpeculativeOptions.js";
import { SavedPromptStates, promptStateIdentity, type PromptStateOptions } from "./SavedPromptStates.js";
import { ModelSpeculation } from "./speculation/ModelSpeculation.js";
import { decideQuestions } from "./decideQuestions.js";
import { decisionLabels, type DecisionLabel } from "./decisionLabels.js";

const maxCachedSchemaGrammars = 32;
/** What ends a harmony model's analysis and opens its final answer. */
const harmonyFinalHeader = "<|end|><|start|>assistant<|channel|>final<|message|>";

export type LlamaChatEngineOptions = {
    id: string;
    modelPath: string;
    /** Tokens per sequence; null = the model's training context. */
    contextSize: number | null;
    threads: number;
    /** Concurrent sequences (requests or choices) on the one context. */
    parallel: number;
    queueSize: number;
    /** Reuse the KV cache of a prompt's prefix shared with a sequence's last request (SequencePrefixCache); default on. */
    promptCache?: PromptCacheMode;
    /** llama.cpp's flash attention: on, off, or (default) where the backend supports it. */
    flashAttention?: boolean | "auto";
    /** Tokens per llama.cpp batch, also the prompt chunk grid; default node-llama-cpp's (512). */
    batchSize?: number;
    /** `think-tags` / `harmony`: split answers into reasoning and content in that format; `none`: never; `auto` (default): detect from the template and vocabulary. */
    reasoning?: "auto" | ReasoningFormat | "none";
    /** Layers offloaded to the GPU when the runtime has one (node-llama-cpp's `gpuLayers`); default auto. */
    gpuLayers?: "auto" | "max" | number;
    /** Speculative decoding; default off. */
    speculative?: SpeculativeOptions;
    /** Where the prompt cache is kept while the model is unloaded (SavedPromptStates); none = it is lost with the model. */
    promptStates?: PromptStateOptions;
};


/** A legacy completions prompt: the client's text or tokens as they are (no template, no reasoning split), maybe echoed back. */
type RawTurnPrompt = {kind: "raw", tokens: Token[], rawPrompt: RawPrompt, clientStart: number};
/** A job's prompt tokens and what they were made from: a raw prompt, or a conversation (to a thinking model: its reasoning settings). */
type TurnPrompt = RawTurnPrompt | {kind: "conversation", tokens: Token[], reasoning: ChoiceSettings["reasoning"]};

/** What every choice of a job shares, decided before the job waits for sequences. */
type Turn = {
    prompt: TurnPrompt;
    /** Already clamped to what fits beside the prompt. */
    maxTokens: number;
    tokenBias: TokenBias | undefined;
    grammar: LlamaGrammar | undefined;
    calls: ToolCallPlan | null;
    /** The choices may draft (speculative decoding). */
    speculate: boolean;
};

/** A thinking model's reasoning settings; undefined for a raw prompt or a model that does not think. */
function reasoningOf(prompt: TurnPrompt): ChoiceSettings["reasoning"] {
    return prompt.kind === "conversation" ? prompt.reasoning : undefined;
}

/**
 * One GGUF chat model: one context with `parallel` sequences that node-llama-cpp decodes in shared
 * batches (kept in step and in order: DecodeStepBarrier, sequenceOrderedBatching), a bounded queue
 * in front of them, and everything that is per-model (prompt renderer, JSON grammar, fingerprint)
 * prepared once at load time.
 */
export class LlamaChatEngine implements ChatEngine {
    readonly info: ChatEngineInfo;
    /** Places for sequences; which sequence a request gets is the prefix cache's choice. */
    private readonly pool: AdmissionQueue;
    private readonly sequences: SequencePrefixCache<LlamaContextSequence>;
    /** Requests that got their sequences so far: tells a request whether another one ran beside it. */
    private leasesGranted = 0;
    private readonly stepBarrier = new DecodeStepBarrier();
    private readonly schemaGrammars = new Map<string, LlamaGrammar>();
    private readonly distributionTap: RawDistributionTap;
    private readonly tokenBytes: TokenBytes;
    private readonly tokenFloor: PromptTokenFloor;
    /** Where prompts too large for the main thread are rendered and tokenized. */
    private readonly renderThread: PromptRenderThread;
    /** What the engine writes to end a thought over its budget (the model's format: `</think>`, or harmony's end of analysis and final header). */
    private readonly thinkCloseTokens: readonly Token[];
    /** /v1/tokenize and /v1/detokenize on this model. */
    private readonly tokenizer: LlamaTokenizer;
    /** The prompt cache kept on disk while the model is unloaded; null = not kept. */
    private savedStates: SavedPromptStates | null = null;
    /** What the last load restored of it, for the "Loaded" log line. */
    private restoredStates = {sequences: 0, tokens: 0};
    /** The single-token labels decision questions' options get (decisionLabels). */
    private readonly decisionLabels: DecisionLabel[];

    private constructor(
        private readonly llama: Llama,
        private readonly model: LlamaModel,
        private readonly context: LlamaContext,
        private readonly renderer: ChatPromptRenderer,
        private readonly jsonGrammar: LlamaGrammar,
        options: LlamaChatEngineOptions,
        fingerprint: string,
        private readonly runtime: {binary: string, flashAttention: boolean | "auto", gpu: GpuDescription},
        private readonly speculation: ModelSpeculation
    ) {
        const sequences = Array.from({length: context.totalSequences}, () => speculation.createSequence(context));
        this.distributionTap = RawDistributionTap.install(context, model);
        this.tokenBytes = new TokenBytes(model);
        this.tokenFloor = new PromptTokenFloor(model, renderer.usesTemplate
            ? measureTemplateFloor(renderer, (text) => model.tokenize(text, false, "trimLeadingSpace").length)
            : null);
        this.renderThread = new PromptRenderThread(options.modelPath);
        this.sequences = new SequencePrefixCache(sequences, options.promptCache ?? "on", context.batchSize);
        this.pool = new AdmissionQueue(sequences.length, options.queueSize, options.id);
        this.tokenizer = new LlamaTokenizer({id: options.id, model, tokenBytes: this.tokenBytes, renderThread: this.renderThread,
            prepare: (request) => this.prepare(request), load: () => this.pool.load(), queueSize: options.queueSize});
        this.decisionLabels = decisionLabels(model);
        this.info = {
            id: options.id,
            decisionOptions: this.decisionLabels.length,
            contextSize: context.contextSize,
            vocabularySize: vocabularySize(model),
            fingerprint,
            toolCallFormat: renderer.toolCallFormat,
            fillInTheMiddle: model.tokens.infill.prefix != null && model.tokens.infill.suffix != null,
            reasoningFormat: options.reasoning == null || options.reasoning === "auto" ? detectReasoningFormat(model) : options.reasoning === "none" ? null : options.reasoning
        };
        // The markup alone (a SentencePiece vocabulary would put a space piece before each text around it); the model writes what follows.
        this.thinkCloseTokens = model.tokenize(this.info.reasoningFormat === "harmony" ? harmonyFinalHeader : "</think>", true, "trimLeadingSpace");
    }

    static async load(llama: Llama, options: LlamaChatEngineOptions): Promise<LlamaChatEngine> {
        const model = await llama.loadModel({modelPath: options.modelPath, gpuLayers: llama.gpu === false ? 0 : options.gpuLayers ?? "auto"});
        try {
            assertLogitBiasSupported(model);
            // The batching strategy needs the context it belongs to, which exists only after this call.
            let created: LlamaContext | undefined;
            const context = created = await model.createContext({
                contextSize: options.contextSize ?? model.trainContextSize,
                sequences: options.parallel,
                threads: options.threads,
                batching: {itemPrioritizationStrategy: sequenceOrderedBatching(() => created)},
                flashAttention: options.flashAttention ?? "auto",
                batchSize: options.batchSize,
                // node-llama-cpp would otherwise shrink the context to fit memory without saying so.
                failedCreationRemedy: false
            });
            const renderer = new ChatPromptRenderer(model);
            const jsonGrammar = await llama.createGrammar({grammar: jsonObjectGrammar});
            const flashAttention = resolvedFlashAttention(llama, model, options.flashAttention ?? "auto");
            const identity = runtimeIdentity(llama);
            const fingerprint = systemFingerprint({
                ...identity,
                modelPath: options.modelPath,
                contextSize: context.contextSize,
                threads: options.threads,
                flashAttention
            });
            const runtime = {binary: identity.binary, flashAttention, gpu: await describeGpu(llama, model)};
            const speculation = await ModelSpeculation.load(llama, {context, modelPath: options.modelPath}, options.speculative, {
                threads: options.threads, gpuLayers: options.gpuLayers ?? "auto", flashAttention: options.flashAttention ?? "auto"
            });
            const engine = new LlamaChatEngine(llama, model, context, renderer, jsonGrammar, options, fingerprint, runtime, speculation);
            if (options.promptStates != null && options.promptStates.maxBytes > 0 && options.promptCache !== "off") {
                const identity = await promptStateIdentity({
                    fingerprint, modelPath: options.modelPath, contextSize: context.contextSize, sequences: context.totalSequences, batchSize: context.batchSize
                });
                await engine.restorePromptStates(new SavedPromptStates(options.promptStates, options.id, identity));
            }
            return engine;
        } catch (error) {
            await model.dispose();
            throw error;
        }
    }

    /** Before the first request: the prompt cache the model's last unload saved goes back into its sequences. */
    private async restorePromptStates(saved: SavedPromptStates) {
        this.savedStates = saved;
        const restored = await saved.restore(this.sequences.recentFirst().map(({sequence}) => sequence));
        for (const {sequence, wholeChunkTokens} of restored)
            this.sequences.giveBack(sequence, wholeChunkTokens);
        this.restoredStates = {sequences: restored.length, tokens: restored.reduce((sum, {sequence}) => sum + sequence.contextTokens.length, 0)};
    }

    load(): EngineLoad {
        return {...this.pool.load(), details: {...this.runtime, promptCache: this.sequences.stats(), speculative: this.speculation.stats()}};
    }

    /** For the "Loaded" log line: where the model runs (backend, devices, VRAM, offloaded layers) and how. */
    describe() {
        const {binary, flashAttention, gpu} = this.runtime;
        return {
            context: this.info.contextSize, binary, flashAttention, backend: gpu.backend,
            ...(gpu.backend === "cpu" ? {} : {devices: gpu.devices.join(", "), vram_mb: Math.round(gpu.vramBytes / 2 ** 20), gpu_layers: gpu.offloadedLayers}),
            promptCache: this.sequences.mode, speculative: this.speculation.describe(),
            ...(this.restoredStates.sequences > 0 ? {restored_sequences: this.restoredStates.sequences, restored_tokens: this.restoredStates.tokens} : {})
        };
    }

    async countPromptTokens(job: ChatJob): Promise<number> {
        const floor = this.tokenFloor.of(job);
        if (floor >= this.info.contextSize)
            throw new ContextLengthExceededError(this.info.contextSize, floor, {atLeast: true});
        const tools = job.tools != null && job.tools.functions.length > 0 && this.renderer.toolCallFormat != null ? job.tools.functions : undefined;
        return (await this.prepare(this.promptRequest(job, tools, false))).tokens.length;
    }

    /** What the prompt of `job` is made of (a raw prompt, or the conversation and what its rendering depends on). */
    private promptRequest(job: ChatJob, functions: ChatToolFunction[] | undefined, constrained: boolean): PromptRequest {
        return job.rawPrompt != null
            ? {kind: "raw", rawPrompt: job.rawPrompt}
            : {
                kind: "conversation", format: this.info.reasoningFormat ?? null, functions, constrained,
                job: {turns: job.turns, templateKwargs: job.templateKwargs, reasoning: job.reasoning}
            };
    }

    /** The prompt's tokens: on the main thread when it is small (isSmallPrompt), in the render thread otherwise. */
    private prepare(request: PromptRequest): Promise<PreparedPrompt> {
        if (isSmallPrompt(request, this.renderer))
            return Promise.resolve(preparePrompt(this.model, this.renderer, request));
        return this.renderThread.prepare(request);
    }

    tokenize(input: TokenizeInput, {withPieces}: {withPieces: boolean}): Promise<Tokenized> {
        const tools = input.kind === "prompt" && this.renderer.toolCallFormat != null ? input.job.tools?.functions : undefined;
        return this.tokenizer.tokenize(input.kind === "text" ? input : this.promptRequest(input.job, tools, false), withPieces);
    }

    detokenize(tokens: readonly number[]): Promise<string> {
        return this.tokenizer.detokenize(tokens);
    }

    decide(job: DecisionJob, signal: AbortSignal): Promise<DecisionOutcome> {
        return decideQuestions({
            model: this.model, renderer: this.renderer, format: this.info.reasoningFormat ?? null, labels: this.decisionLabels,
            pool: this.pool, sequences: this.sequences, contextSize: this.info.contextSize, batchSize: this.context.batchSize
        }, job, signal);
    }

    countTextTokens(text: string): number {
        return text === "" ? 0 : this.model.tokenize(text, false, "trimLeadingSpace").length;
    }

    async submit(job: ChatJob, hooks: ChatRunHooks): Promise<ChatRun> {
        const turn = await this.planTurn(job);
        // Last: from here on the request holds (or waits for) sequences.
        const lease = this.pool.acquire(job.n, hooks.signal);
        const done = lease.then(({release}) => this.runTurn(job, hooks, turn, release));
        return {promptTokens: turn.prompt.tokens.length, done};
    }

    /** Everything a job's choices share, decided before it waits for sequences (a request refused here never queues). */
    private async planTurn(job: ChatJob): Promise<Turn> {
        if (job.n > this.pool.capacity)
            throw new TooManyChoicesError(this.info.id, job.n, this.pool.capacity);
        const tools = job.tools ?? null;
        const toolCallFormat = this.renderer.toolCallFormat;
        if (tools != null && tools.functions.length > 0 && toolCallFormat == null)
            throw new Error(`Model '${this.info.id}' has no tool support; the request should have been refused`);
        const contextSize = this.info.contextSize;
        // Refused before rendering and tokenizing when what it holds says it cannot fit.
        const floor = this.tokenFloor.of(job);
        if (floor >= contextSize)
            throw new ContextLengthExceededError(contextSize, floor, {atLeast: true});
        const forced = tools?.choice.type === "forced" ? tools.choice : null;
        const constrained = forced != null || job.jsonSchema != null || job.jsonObject;
        const prepared = await this.prepare(this.promptRequest(job, tools?.functions, constrained));
        if (prepared.tokens.length === 0)
            throw new EmptyPromptError();
        if (prepared.tokens.length >= contextSize)
            throw new ContextLengthExceededError(contextSize, prepared.tokens.length);

        const maxTokens = Math.min(job.maxTokens ?? Infinity, contextSize - prepared.tokens.length);
        const tokenBias = createLogitBias(this.model, job.sampling.logitBias);
        const calls: ToolCallPlan | null = tools != null && tools.choice.type !== "none" && toolCallFormat != null
            ? {format: toolCallFormat, names: new Set(tools.functions.map((fn) => fn.name)), forced: forced != null}
            : null;
        const grammar = forced != null && calls != null
            ? this.cachedGrammar("tools:" + JSON.stringify(forced), () => toolCallGrammarText(this.llama, calls.format, forced.functions, forced.parallel))
            : job.jsonSchema != null ? this.schemaGrammar(job.jsonSchema) : job.jsonObject ? this.jsonGrammar : undefined;
        // A raw prompt (legacy completions) replaces the rendered conversation and is text as it is; a conversation
        // to a thinking model: where its output starts, its budget, the closing tag the engine writes.
        const reasoningFormat = this.info.reasoningFormat ?? null;
        const prompt: TurnPrompt = job.rawPrompt != null
            ? {kind: "raw", tokens: prepared.tokens, rawPrompt: job.rawPrompt, clientStart: prepared.clientStart}
            : {
                kind: "conversation", tokens: prepared.tokens, reasoning: reasoningFormat == null ? undefined : {
                    format: reasoningFormat, start: prepared.start, budgetTokens: job.reasoning?.budgetTokens ?? null, closeTokens: this.thinkCloseTokens
                }
            };
        // Drafts are verified as the model's own picks, which holds unless a choice's sampling changes between a
        // draft's positions in ways node-llama-cpp cannot follow: penalties counted over the tokens generated so
        // far, and a grammar that starts only after a thinking model's thought.
        const speculate = job.sampling.frequencyPenalty === 0 && job.sampling.presencePenalty === 0 && !(reasoningOf(prompt) != null && grammar != null);
        return {prompt, maxTokens, tokenBias, grammar, calls, speculate};
    }

    /** The job on its leased sequences: the prompt echoed if asked, then its choices side by side; the sequences go back at the end. */
    private async runTurn(job: ChatJob, hooks: ChatRunHooks, turn: Turn, release: () => void): Promise<ChoiceResult[]> {
        const promptTokens = turn.prompt.tokens;
        const taken = this.sequences.take(promptTokens, job.n);
        const slots = taken.map(({sequence}) => sequence);
        const leaseNumber = ++this.leasesGranted;
        const aloneAtStart = this.pool.load().busy === job.n;
        // Hooks only once the caller has its run (it resumes in a microtask; this waits for the next turn).
        await new Promise((resolve) => setImmediate(resolve));
        if (turn.prompt.kind === "raw" && turn.prompt.rawPrompt.echo === true) {
            try {
                hooks.onPrompt?.(await this.echo(turn.prompt, job, hooks.signal, slots[0]));
            } catch (error) {
                // As for a failed choice below: what the evaluation left is not worth trusting.
                await slots[0].clearHistory().catch(() => {});
                slots.forEach((sequence) => this.sequences.giveBack(sequence, 0));
                release();
                throw error;
            }
        }
        // One failing choice stops its siblings; the request's own signal stops them all.
        const stopAll = new AbortController();
        const signal = AbortSignal.any([hooks.signal, stopAll.signal]);
        const outcomes = await Promise.allSettled(taken.map(async ({sequence, kept}, index): Promise<ChoiceResult> => {
            try {
                return await this.runChoice(job, hooks, turn, index, sequence, kept, signal);
            } catch (error) {
                stopAll.abort(error);
                // What a failed evaluation left in the sequence is not worth trusting for the next prompt.
                await sequence.clearHistory().catch(() => {});
                throw error;
            }
        }));
        // Sequences go back only once every choice has let go of its own.
        // For the exact cache: the prompt went in whole chunks of the grid only if nothing shared its batches
        // (another choice or request would have), which is certain when nobody else ran from start to end.
        const alone = job.n === 1 && aloneAtStart && this.leasesGranted === leaseNumber;
        const wholeChunks = alone ? wholeChunkTokens(promptTokens.length, this.context.batchSize) : 0;
        outcomes.forEach((outcome, index) =>
            this.sequences.giveBack(slots[index], outcome.status === "fulfilled" ? wholeChunks : 0));
        release();
        const results: ChoiceResult[] = [];
        for (const outcome of outcomes) {
            if (outcome.status === "rejected")
                throw hooks.signal.aborted ? hooks.signal.reason : outcome.reason;
            results.push(outcome.value);
        }
        return results;
    }

    /** A raw prompt as echoed back (legacy completions' `echo`), its tokens' logprobs evaluated on the first choice's sequence when asked. */
    private echo(prompt: RawTurnPrompt, job: ChatJob, signal: AbortSignal, sequence: LlamaContextSequence) {
        return promptEcho({
            model: this.model, tokens: prompt.tokens, clientStart: prompt.clientStart,
            text: typeof prompt.rawPrompt.prompt === "string" ? prompt.rawPrompt.prompt : null,
            logprobs: job.logprobs == null ? undefined : {
                topLogprobs: job.logprobs, bytes: this.tokenBytes, tap: this.distributionTap, sequence, chunkSize: this.context.batchSize, signal
            }
        });
    }

    /** Choice `index` generated on its sequence, its output handed to the hooks as it comes. */
    private async runChoice(
        job: ChatJob, hooks: ChatRunHooks, turn: Turn, index: number, sequence: LlamaContextSequence, kept: number, signal: AbortSignal
    ): Promise<ChoiceResult> {
        const reasoning = reasoningOf(turn.prompt);
        const output = new ChoiceOutput(index, hooks, turn.calls,
            reasoning == null ? null : {format: reasoning.format, startsInReasoning: reasoning.start === "reasoning"}, job.logprobs != null);
        const speculation = this.speculation.forChoice(sequence, turn.speculate);
        hooks.onPromptCache?.(index, kept);
        const outcome = await generateChoice({
            model: this.model,
            sequence,
            promptTokens: turn.prompt.tokens,
            maxTokens: turn.maxTokens,
            stop: job.stop,
            temperature: job.sampling.temperature,
            topP: job.sampling.topP,
            topK: job.sampling.topK,
            seed: choiceSeed(job.sampling.seed, index),
            frequencyPenalty: job.sampling.frequencyPenalty,
            presencePenalty: job.sampling.presencePenalty,
            tokenBias: turn.tokenBias,
            grammar: turn.grammar,
            promptChunkSize: this.context.batchSize,
            keptPromptTokens: kept,
            stepBarrier: this.stepBarrier,
            signal,
            logprobs: job.logprobs == null ? undefined : {topLogprobs: job.logprobs, tap: this.distributionTap, bytes: this.tokenBytes},
            reasoning,
            speculation: speculation.settings,
            onText: (text, logprobs) => output.push(text, logprobs)
        });
        speculation.done();
        this.sequences.record(turn.prompt.tokens.length, outcome.cachedPromptTokens);
        const result = output.finish(outcome);
        hooks.onFinish?.(result);
        return result;
    }

    async dispose() {
        this.pool.close(new EngineDisposedError(this.info.id));
        await this.pool.drain();
        // Every request has ended: each sequence is free and holds what its last request left.
        await this.savedStates?.save(this.sequences.recentFirst()).catch(() => {});
        await this.renderThread.close();
        await this.context.dispose();
        await this.model.dispose();
        await this.speculation.dispose();
    }

    /** Compiled once per distinct schema: clients tend to send the same few schemas again and again. */
    private schemaGrammar(schema: Record<string, unknown>) {
        return this.cachedGrammar(JSON.stringify(schema), () => createJsonSchemaGrammar(this.llama, schema));
    }

    private cachedGrammar(key: string, create: () => LlamaGrammar | string) {
        let grammar = this.schemaGrammars.get(key);
        if (grammar == null) {
            try {
                const created = create();
                grammar = typeof created === "string" ? new LlamaGrammar(this.llama, {grammar: created}) : created;
            } catch (error) {
                throw new InvalidJsonSchemaError((error as Error).message);
            }
            if (this.schemaGrammars.size >= maxCachedSchemaGrammars)
                this.schemaGrammars.delete(this.schemaGrammars.keys().next().value!);
        } else
            this.schemaGrammars.delete(key);
        this.schemaGrammars.set(key, grammar);
        return grammar;
    }
}

/** What `flashAttention: "auto"` became: llama.cpp turns it on where the backend runs the op, which the CPU always does. */
function resolvedFlashAttention(llama: Llama, model: LlamaModel, setting: boolean | "auto"): boolean | "auto" {
    if (!model.flashAttentionSupported)
        return false;
    if (setting !== "auto")
        return setting;
    return llama.gpu === false ? true : "auto";
}

function vocabularySize(model: LlamaModel) {
    return model.fileInfo.metadata.tokenizer?.ggml?.tokens?.length ?? 0;
}
