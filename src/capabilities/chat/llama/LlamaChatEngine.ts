import type { Llama, LlamaContext, LlamaContextSequence, LlamaGrammar, LlamaModel, Token } from "node-llama-cpp";
import type { ChatEngine, ChatEngineInfo, ChatJob, ChatRun, ChatRunHooks, DecisionJob, DecisionOutcome, ReasoningFormat, TokenizeInput, Tokenized, ToolCallFormat } from "../ChatEngine.js";
import type { EngineLoad } from "../../../core/engines/EngineLoad.js";
import { ContextLengthExceededError } from "../errors/ContextLengthExceededError.js";
import { EngineDisposedError } from "../../../core/engines/EngineDisposedError.js";
import { AdmissionQueue } from "../../../core/admission/AdmissionQueue.js";
import { ChatPromptRenderer } from "./ChatPromptRenderer.js";
import { assertLogitBiasSupported } from "./createLogitBias.js";
import { RawDistributionTap } from "./RawDistributionTap.js";
import { TokenBytes } from "./TokenBytes.js";
import { PromptTokenFloor } from "./PromptTokenFloor.js";
import { jsonObjectGrammar } from "./jsonObjectGrammar.js";
import { runtimeIdentity } from "../../../runtimes/llama/llamaRuntime.js";
import { describeGpu, type GpuDescription } from "../../../runtimes/llama/describeGpu.js";
import { sequenceOrderedBatching } from "./sequenceOrderedBatching.js";
import { SequencePrefixCache, type PromptCacheMode } from "./SequencePrefixCache.js";
import { systemFingerprint } from "../../../runtimes/llama/systemFingerprint.js";
import { decodesAhead } from "../../../runtimes/llama/internals.js";
import { isSmallPrompt } from "./isSmallPrompt.js";
import { measureTemplateFloor, nextTurnOfEventLoop } from "./measureTemplateFloor.js";
import { preparePrompt, type PreparedPrompt, type PromptRequest } from "./preparePrompt.js";
import { PromptRenderThread } from "./PromptRenderThread.js";
import { LlamaTokenizer } from "./LlamaTokenizer.js";
import { detectReasoningFormat } from "./detectReasoningFormat.js";
import type { SpeculativeOptions } from "./speculation/SpeculativeOptions.js";
import { promptRequestOf, TurnPlanner } from "./TurnPlanner.js";
import { TurnRunner } from "./TurnRunner.js";
import { SavedPromptStates, promptStateIdentity, type PromptStateOptions } from "./SavedPromptStates.js";
import { DisplacedStates } from "./DisplacedStates.js";
import { PrefixCopies } from "./PrefixCopies.js";
import { ModelSpeculation } from "./speculation/ModelSpeculation.js";
import { decideQuestions } from "./decideQuestions.js";
import { decisionLabels, mostDecisionOptions, type DecisionLabels } from "../shared/decisionLabels.js";
import { llamaLabelTokenizer, markupTokens } from "./llamaTokenizerParts.js";
import { tagsOf } from "./text/createReasoningSplitter.js";
import { decisionTokens, isSmallDecision } from "./decisionPrompt.js";
import { loadLlamaModel } from "../../../runtimes/llama/loadLlamaModel.js";

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
    /** Hears how far the weights' load is, 0 to 1 (node-llama-cpp's `onLoadProgress`). */
    onLoadProgress?: (fraction: number) => void;
};


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
    private readonly tokenBytes: TokenBytes;
    /** Where prompts too large for the main thread are rendered and tokenized. */
    private readonly renderThread: PromptRenderThread;
    /** Each job's turn, decided before it waits for sequences. */
    private readonly planner: TurnPlanner;
    /** Each job's turn on its sequences, once it has them. */
    private readonly runner: TurnRunner;
    /** /v1/tokenize and /v1/detokenize on this model. */
    private readonly tokenizer: LlamaTokenizer;
    /** The prompt cache kept on disk while the model is unloaded; null = not kept. */
    private savedStates: SavedPromptStates | null = null;
    /** Conversations pushed out of the sequences by others, kept on disk while the model is loaded; null = not kept. */
    private displaced: DisplacedStates | null = null;
    /** Prompt tokens copied between sequences rather than evaluated again (null: `exact` cache, or a model whose sequences need checkpoints). */
    private readonly copies: PrefixCopies | null = null;
    /** What the last load restored of it, for the "Loaded" log line. */
    private restoredStates = {sequences: 0, tokens: 0, draftTokens: 0};
    /** The labels decision questions' options get (decisionLabels). */
    private readonly decisionLabels: DecisionLabels<Token>;

    private constructor(
        private readonly llama: Llama,
        private readonly model: LlamaModel,
        private readonly context: LlamaContext,
        private readonly renderer: ChatPromptRenderer,
        jsonGrammar: LlamaGrammar,
        options: LlamaChatEngineOptions,
        fingerprint: string,
        private readonly runtime: {binary: string, flashAttention: boolean | "auto", gpu: GpuDescription, decodeAhead: boolean},
        private readonly speculation: ModelSpeculation,
        private readonly tokenFloor: PromptTokenFloor
    ) {
        const sequences = Array.from({length: context.totalSequences}, () => speculation.createSequence(context));
        const distributionTap = RawDistributionTap.install(context, model, speculation.verification === "native");
        this.tokenBytes = new TokenBytes(model);
        this.renderThread = new PromptRenderThread(options.modelPath);
        this.sequences = new SequencePrefixCache(sequences, options.promptCache ?? "on", context.batchSize);
        // Not in `exact` mode: a copied prefix was evaluated in another sequence's batches.
        if (options.promptCache !== "exact" && PrefixCopies.supported(sequences[0]))
            this.copies = new PrefixCopies(sequences);
        this.pool = new AdmissionQueue(sequences.length, options.queueSize, options.id);
        this.tokenizer = new LlamaTokenizer({id: options.id, model, tokenBytes: this.tokenBytes, renderThread: this.renderThread,
            prepare: (request, signal) => this.prepare(request, signal), isSmall: (request) => isSmallPrompt(request, this.renderer),
            load: () => this.pool.load(), queueSize: options.queueSize});
        this.decisionLabels = decisionLabels(llamaLabelTokenizer(model));
        const reasoningFormat = options.reasoning == null || options.reasoning === "auto" ? detectReasoningFormat(model) : options.reasoning === "none" ? null : options.reasoning;
        this.info = {
            id: options.id,
            decisionOptions: mostDecisionOptions(this.decisionLabels),
            contextSize: context.contextSize,
            vocabularySize: vocabularySize(model),
            fingerprint,
            // Harmony's calls are messages of their own, read by its reasoning split (`reasoning: "none"` leaves them text).
            toolCallFormat: renderer.toolCallFormat?.forcedOpening != null && reasoningFormat !== "harmony" ? null : renderer.toolCallFormat,
            fillInTheMiddle: model.tokens.infill.prefix != null && model.tokens.infill.suffix != null,
            reasoningFormat
        };
        this.planner = new TurnPlanner({
            llama, model, renderer, info: this.info, capacity: this.pool.capacity, tokenFloor: this.tokenFloor, jsonGrammar, prepare: (request, signal) => this.prepare(request, signal)
        });
        this.runner = new TurnRunner({
            model, batchSize: context.batchSize, sequences: this.sequences, copies: this.copies, displaced: () => this.displaced, speculation,
            distributionTap, tokenBytes: this.tokenBytes, load: () => this.pool.load(),
            preservedTokens: markupTokens(model, outputMarkup(this.info.toolCallFormat ?? null, reasoningFormat))
        });
    }

    static async load(llama: Llama, options: LlamaChatEngineOptions): Promise<LlamaChatEngine> {
        const model = await loadLlamaModel(llama, {
            modelPath: options.modelPath, gpuLayers: llama.gpu === false ? 0 : options.gpuLayers ?? "auto", onLoadProgress: options.onLoadProgress
        });
        // What a load that fails part way has made, disposed with it: the draft model's, then the whole engine's.
        let speculation: ModelSpeculation | undefined;
        let engine: LlamaChatEngine | undefined;
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
            const runtime = {binary: identity.binary, flashAttention, gpu: await describeGpu(llama, model), decodeAhead: decodesAhead(context)};
            speculation = await ModelSpeculation.load(llama, {context, modelPath: options.modelPath}, options.speculative, {
                threads: options.threads, gpuLayers: options.gpuLayers ?? "auto", flashAttention: options.flashAttention ?? "auto"
            });
            const tokenFloor = await PromptTokenFloor.forModel(options.modelPath, fingerprint, () => PromptTokenFloor.measure(model, async () => renderer.usesTemplate
                ? await measureTemplateFloor(renderer, (text) => model.tokenize(text, false, "trimLeadingSpace").length)
                : null, nextTurnOfEventLoop));
            engine = new LlamaChatEngine(llama, model, context, renderer, jsonGrammar, options, fingerprint, runtime, speculation, tokenFloor);
            if (options.promptStates != null && options.promptStates.maxBytes > 0 && options.promptCache !== "off") {
                const identity = await promptStateIdentity({
                    fingerprint, modelPath: options.modelPath, contextSize: context.contextSize, sequences: context.totalSequences, batchSize: context.batchSize,
                    draft: speculation.draftIdentity()
                });
                await engine.restorePromptStates(new SavedPromptStates(options.promptStates, options.id, identity));
                // Only where any shared prefix is reused: in `exact` mode a restored state's batches are unknown.
                if (options.promptCache !== "exact")
                    engine.displaced = new DisplacedStates(options.promptStates, options.id);
            }
            return engine;
        } catch (error) {
            if (engine != null)
                await engine.dispose().catch(() => {});
            else {
                await speculation?.dispose().catch(() => {});
                await model.dispose();
            }
            throw error;
        }
    }

    /** Before the first request: the prompt cache the model's last unload saved goes back into its sequences. */
    private async restorePromptStates(saved: SavedPromptStates) {
        this.savedStates = saved;
        const restored = await saved.restore(this.sequences.recentFirst().map(({sequence}) => sequence), (sequence) => this.speculation.draftSequenceOf(sequence));
        for (const {sequence, wholeChunkTokens} of restored)
            this.sequences.giveBack(sequence, wholeChunkTokens);
        this.restoredStates = {
            sequences: restored.length, tokens: restored.reduce((sum, {sequence}) => sum + sequence.contextTokens.length, 0),
            draftTokens: restored.reduce((sum, {sequence}) => sum + (this.speculation.draftSequenceOf(sequence)?.contextTokens.length ?? 0), 0)
        };
    }

    load(): EngineLoad {
        return {...this.pool.load(), details: {
            ...this.runtime, draftVerification: this.speculation.verification, promptCache: {...this.sequences.stats(), copiedTokens: this.copies?.copiedTokens ?? 0}, speculative: this.speculation.stats()
        }};
    }

    /** For the "Loaded" log line: where the model runs (backend, devices, VRAM, offloaded layers) and how. */
    describe() {
        const {binary, flashAttention, gpu, decodeAhead} = this.runtime;
        return {
            context: this.info.contextSize, binary, draftVerification: this.speculation.verification, decodeAhead, flashAttention, backend: gpu.backend,
            ...(gpu.backend === "cpu" ? {} : {devices: gpu.devices.join(", "), vram_mb: Math.round(gpu.vramBytes / 2 ** 20), gpu_layers: gpu.offloadedLayers}),
            promptCache: this.sequences.mode, speculative: this.speculation.describe(),
            ...(this.restoredStates.sequences > 0 ? {restored_sequences: this.restoredStates.sequences, restored_tokens: this.restoredStates.tokens} : {}),
            ...(this.restoredStates.draftTokens > 0 ? {restored_draft_tokens: this.restoredStates.draftTokens} : {})
        };
    }

    async countPromptTokens(job: ChatJob, signal?: AbortSignal): Promise<number> {
        const floor = this.tokenFloor.of(job);
        if (floor >= this.info.contextSize)
            throw new ContextLengthExceededError(this.info.contextSize, floor, {atLeast: true});
        const tools = job.tools != null && job.tools.functions.length > 0 && this.renderer.toolCallFormat != null ? job.tools.functions : undefined;
        return (await this.prepare(promptRequestOf(job, this.info.reasoningFormat, tools, false), signal)).tokens.length;
    }

    /** The prompt's tokens: on the main thread when it is small (isSmallPrompt), in the render thread otherwise (stopped when `signal` aborts). */
    private prepare(request: PromptRequest, signal?: AbortSignal): Promise<PreparedPrompt> {
        if (isSmallPrompt(request, this.renderer))
            return Promise.resolve(preparePrompt(this.model, this.renderer, request));
        return this.renderThread.prepare(request, signal);
    }

    tokenize(input: TokenizeInput, {withPieces, signal}: {withPieces: boolean, signal?: AbortSignal}): Promise<Tokenized> {
        const tools = input.kind === "prompt" && this.renderer.toolCallFormat != null ? input.job.tools?.functions : undefined;
        return this.tokenizer.tokenize(input.kind === "text" ? input : promptRequestOf(input.job, this.info.reasoningFormat, tools, false), withPieces, signal);
    }

    detokenize(tokens: readonly number[]): Promise<string> {
        return this.tokenizer.detokenize(tokens);
    }

    decide(job: DecisionJob, signal: AbortSignal): Promise<DecisionOutcome> {
        const format = this.info.reasoningFormat ?? null;
        return decideQuestions({
            prepare: (turns, texts, prepareSignal) => isSmallDecision(this.renderer, format, turns, texts)
                ? Promise.resolve(decisionTokens(this.model, this.renderer, format, turns, texts))
                : this.renderThread.decisionTokens(format, turns, texts, prepareSignal),
            labels: this.decisionLabels,
            pool: this.pool, sequences: this.sequences, copies: this.copies, contextSize: this.info.contextSize, batchSize: this.context.batchSize
        }, job, signal);
    }

    textTokensAtLeast(utf8Bytes: number): number {
        return this.tokenFloor.ofText(utf8Bytes);
    }

    countTextTokens(text: string): number {
        return text === "" ? 0 : this.model.tokenize(text, false, "trimLeadingSpace").length;
    }

    async submit(job: ChatJob, hooks: ChatRunHooks): Promise<ChatRun> {
        const turn = await this.planner.plan(job, hooks.signal);
        // Last: from here on the request holds (or waits for) sequences.
        const lease = this.pool.acquire(job.n, hooks.signal);
        const done = lease.then(({release}) => this.runner.run(job, hooks, turn, release));
        return {promptTokens: turn.prompt.tokens.length, done};
    }

    async dispose() {
        this.pool.close(new EngineDisposedError(this.info.id));
        await this.pool.drain();
        // Every request has ended: each sequence is free and holds what its last request left.
        await this.displaced?.clear();
        await this.savedStates?.saveOrWarn(this.sequences.recentFirst(), (sequence) => this.speculation.draftSequenceOf(sequence));
        await this.renderThread.close();
        await this.context.dispose();
        await this.model.dispose();
        await this.speculation.dispose();
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

/**
 * The markup an answer's parsers read, which the output keeps as text even where the model's vocabulary has it as control
 * tokens: its call format's (Mistral's `[TOOL_CALLS]`, `[ARGS]`; Gemma 4's `<|tool_call>`; LFM2's `<|tool_call_start|>`) and its reasoning tags (Gemma 4's
 * `<|channel>`, `<channel|>`). Harmony's are text in llama.cpp already.
 */
function outputMarkup(format: ToolCallFormat | null, reasoning: ReasoningFormat | null): string[] {
    const calls = format == null ? [] : [format.prefix, format.paramsPrefix, format.suffix, format.betweenCalls, format.idMarker ?? "",
        ...format.parameters == null ? [] : [format.parameters.keyStart, format.parameters.keyEnd, format.parameters.valueEnd],
        ...format.list == null ? [] : [format.list.separator, format.list.end]];
    const tags = reasoning == null || reasoning === "harmony" ? [] : [tagsOf(reasoning).open, tagsOf(reasoning).close];
    return [...calls, ...tags];
}
