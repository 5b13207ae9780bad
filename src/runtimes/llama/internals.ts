import { LlamaContextSequence, TokenBias, type JinjaTemplateChatWrapper, type LlamaContext, type LlamaModel, type Token } from "node-llama-cpp";

/**
 * Every read or write of node-llama-cpp's private fields, in one place (the layering test allows casts into
 * node-llama-cpp nowhere else). Each function checks the field it uses and throws a
 * {@link NodeLlamaInternalsError} naming it when the installed version does not have it, so an upgrade that
 * moves or renames one fails at load (or in test/model/llamaInternals.test.ts), not with a wrong answer.
 * Written against node-llama-cpp 3.22.1 (patches/node-llama-cpp+3.22.1.patch is checked here too).
 */

/** node-llama-cpp's native context (`LlamaContext._ctx`, an `AddonContext`): the part of it the server calls. */
export type NativeContext = {
    initBatch(size: number): unknown;
    addToBatch(sequenceId: number, firstTokenIndex: number, tokens: Uint32Array, logitIndexes: Uint32Array): ArrayLike<number>;
    sampleToken(batchLogitIndex: number, sampler: unknown, probabilities?: boolean, confidence?: boolean): Promise<unknown>;
    /**
     * The project's addition to node-llama-cpp's addon (patches/node-llama-cpp+3.22.1.patch, compiled by
     * `npm run build:native`; the prebuilt binaries do not have it): samples the rows of a draft in one call, from
     * the row of the token before it, stopping at the first sample that is not the next draft token. Resolves to
     * what `sampleToken` would have given at each sampled row, or null (nothing sampled) when the batch does not hold
     * that draft at those rows.
     */
    sampleDraft?(batchLogitIndex: number, draft: Uint32Array, sampler: unknown, probabilities?: boolean, confidence?: boolean): Promise<unknown[] | null>;
    /**
     * Decodes the batch. With the same patch, given rows to sample (`sampleDraft`'s arguments each), samples them in
     * the same native call and resolves to what `sampleDraft` would have given for each (null for one it could not
     * sample there); without it, resolves to undefined.
     */
    decodeBatch(samples?: NativeSampleRequest[]): Promise<unknown[] | undefined>;
    /**
     * The same patch: when every row of a generation step asked for it (a sixth element `true`), `decodeBatch` starts
     * decoding the step's samples at once, each after its row, on a thread of the context's own; the next
     * `decodeBatch` of exactly those rows takes that decode. This waits for one nobody took and removes its tokens;
     * resolves to whether there was one.
     */
    settlePrefetch?(): Promise<boolean>;
    /** The threads its decodes use (node-llama-cpp's batch dispatch sets the count its thread splitter gives the context). */
    setThreads(threads: number): void;
};
/** A row for {@link NativeContext.decodeBatch} to sample: `sampleDraft`'s arguments. */
export type NativeSampleRequest = [batchLogitIndex: number, draft: Uint32Array, sampler: unknown, probabilities?: boolean, confidence?: boolean, prefetch?: boolean];
/** A native sampler (`AddonSampler`) of the model's own. */
export type NativeSampler = {applyConfig(config: Record<string, unknown>): void, dispose(): void};
/** A decode node-llama-cpp has queued for its next batch (`LlamaContext._queuedDecodes`). */
export type QueuedDecode = {sequenceId: number, tokens: readonly unknown[]};
/** A Jinja chat wrapper's template renderer (`JinjaTemplateChatWrapper._jinjaTemplate`); `render` may be replaced. */
export type JinjaRenderer = {render(params: Record<string, unknown>): string};

type ContextInternals = {
    _ctx?: Partial<NativeContext> & {ensureDraftContextIsCompatibleForSpeculative?: (draft: unknown) => void, getSequenceKvCacheMaxPosition?: (sequenceId: number) => number},
    _queuedDecodes?: unknown
};
type ModelInternals = {_llama?: {_bindings?: {AddonSampler?: new (model: unknown) => NativeSampler}}, _model?: unknown};
type CopyInternals = {
    _copyStateFromOtherSequence: (source: LlamaContextSequence, upToTokenIndex: number) => Promise<boolean>,
    _loadedTokenPredictions: unknown[], _nextTokenIndex: number
};
type SequenceInternals = {
    _sequenceId?: unknown, _tokenPredictor?: unknown, _loadedTokenPredictions?: unknown,
    _copyStateFromOtherSequence?: (source: LlamaContextSequence, upToTokenIndex: number) => Promise<boolean>
};
type TokenBiasInternals = {_biases?: unknown};
type JinjaWrapperInternals = {
    _usingJinjaFunctionCallTemplate?: unknown, _stringifyFunctionParams?: unknown, _combineJinjaModelMessageAndToolCalls?: unknown,
    _stringifyFunctionResult?: unknown, _jinjaTemplate?: Partial<JinjaRenderer>, _wrapFunctionParamsInsideMapKey?: unknown,
    _transformChatHistory?: (...args: unknown[]) => unknown
};
type SequencePrototypeInternals = {_speculativeEvaluate?: unknown, _evaluate?: unknown};

/** node-llama-cpp no longer has a private field the server relies on. */
export class NodeLlamaInternalsError extends Error {
    constructor(readonly field: string, feature: string) {
        super(`This node-llama-cpp version has no ${field}; ${feature} needs updating (src/runtimes/llama/internals.ts).`);
        this.name = "NodeLlamaInternalsError";
    }
}

/** The native context's methods wrapNativeContext can wrap (sampleDraft only where the binary has it). */
const wrappableMethods = ["initBatch", "addToBatch", "sampleToken", "decodeBatch", "sampleDraft", "settlePrefetch", "setThreads"] as const;

/** The context's native context (`LlamaContext._ctx`), checked for the methods the server calls. */
export function nativeContextOf(context: LlamaContext): NativeContext {
    const native = (context as unknown as ContextInternals)._ctx;
    if (native == null || typeof native.sampleToken !== "function" || typeof native.addToBatch !== "function" || typeof native.initBatch !== "function" ||
        typeof native.decodeBatch !== "function")
        throw new NodeLlamaInternalsError("LlamaContext._ctx with initBatch/addToBatch/decodeBatch/sampleToken", "logprobs");
    return native as NativeContext;
}

/**
 * Wraps methods of the context's native context where node-llama-cpp calls them: each given method becomes an own
 * property of the native object itself (`undefined` hides one), so the object node-llama-cpp hands to other native
 * calls stays the native one (a Proxy in its place cannot be unwrapped there: a sliding-window model's checkpoint,
 * `AddonContextSequenceCheckpoint.init(_ctx)`, failed with "Invalid argument"). Returns the native methods as they were.
 */
export function wrapNativeContext(context: LlamaContext, wrap: (original: NativeContext) => Partial<NativeContext>): NativeContext {
    const native = nativeContextOf(context);
    const methods = native as unknown as Record<string, unknown>;
    const original = Object.fromEntries(wrappableMethods.filter((name) => typeof methods[name] === "function")
        .map((name) => [name, (methods[name] as (...args: unknown[]) => unknown).bind(native)])) as NativeContext;
    for (const [name, value] of Object.entries(wrap(original)))
        Object.defineProperty(native, name, {value, writable: true, configurable: true, enumerable: false});
    return original;
}

/** Undoes {@link wrapNativeContext}: the native context's own methods again. */
export function unwrapNativeContext(context: LlamaContext): void {
    const native = nativeContextOf(context) as unknown as Record<string, unknown>;
    for (const name of wrappableMethods)
        if (Object.prototype.hasOwnProperty.call(native, name))
            delete native[name];
}

/** Makes native samplers of the model's own (`model._llama._bindings.AddonSampler` over `model._model`); checked when called. */
export function nativeSamplerFactory(model: LlamaModel): () => NativeSampler {
    const internals = model as unknown as ModelInternals;
    const AddonSampler = internals._llama?._bindings?.AddonSampler;
    if (typeof AddonSampler !== "function" || internals._model == null)
        throw new NodeLlamaInternalsError("LlamaModel._llama._bindings.AddonSampler / LlamaModel._model", "logprobs");
    return () => new AddonSampler(internals._model);
}

/** The sequence's id in its context's batches (`LlamaContextSequence._sequenceId`). */
export function sequenceIdOf(sequence: LlamaContextSequence): number {
    const id = (sequence as unknown as SequenceInternals)._sequenceId;
    if (typeof id !== "number")
        throw new NodeLlamaInternalsError("LlamaContextSequence._sequenceId", "logprobs");
    return id;
}

/**
 * The map a `TokenBias` hands to the native sampler (`TokenBias._biases`, token -> bias). Written directly:
 * the public `TokenBias.set` skips end-of-generation tokens.
 */
export function tokenBiasMap(tokenBias: TokenBias): Map<number, number> {
    const map = (tokenBias as unknown as TokenBiasInternals)._biases;
    if (!(map instanceof Map))
        throw new NodeLlamaInternalsError("TokenBias._biases map", "logit_bias for end-of-generation tokens");
    return map as Map<number, number>;
}

/** Throws at load when {@link tokenBiasMap} would. */
export function assertTokenBiasMap(model: LlamaModel) {
    tokenBiasMap(new TokenBias(model.tokenizer));
}

/**
 * The decodes queued for the context's next batch (`LlamaContext._queuedDecodes`), or undefined when this
 * version does not keep them there (callers then do without: batch order is an optimisation).
 */
export function queuedDecodesOf(context: LlamaContext | undefined): readonly QueuedDecode[] | undefined {
    const queue = (context as unknown as ContextInternals | undefined)?._queuedDecodes;
    return Array.isArray(queue) ? queue as QueuedDecode[] : undefined;
}

/**
 * Copies the first tokens of `tokens` that `source` holds into `target` (another sequence of the same context):
 * `LlamaContextSequence._copyStateFromOtherSequence`, node-llama-cpp 3.22, llama.cpp's `llama_memory_seq_cp` under the
 * context's lock (never in the middle of a batch). With node-llama-cpp's per-sequence KV streams (`kv_unified` off) llama.cpp
 * only records the copy and moves the data at the next `llama_decode`; saving or loading a state before that would see the
 * old data, so the copy stops one token short and `target` evaluates that token at once, which applies it. Returns how
 * many of `tokens` `target` holds then: all of them, or fewer when `source` held fewer by the time the lock was taken (busy
 * with another request, which may have erased some); 0 when nothing could be copied (`target` is emptied then). A source
 * in the middle of speculative decoding holds cells past its text (draft tokens it verified): they are erased from `target`. The cells are checked against the tokens
 * (`LlamaContext._ctx.getSequenceKvCacheMaxPosition`). Not for models whose sequences need checkpoints
 * (`needsCheckpoints`: sliding-window, hybrid, recurrent): the caller checks.
 */
export async function copySequenceState(target: LlamaContextSequence, source: LlamaContextSequence, tokens: readonly Token[]): Promise<number> {
    assertSequenceCopy(target);
    if (tokens.length < 2)
        return 0;
    const internals = target as unknown as CopyInternals;
    const native = (target.context as unknown as ContextInternals)._ctx!;
    const targetId = sequenceIdOf(target);
    let held = 0;
    try {
        await internals._copyStateFromOtherSequence.call(target, source, tokens.length - 1);
        // node-llama-cpp copies every cell of the source, draft tokens a speculative step evaluated past its text too,
        // and then knows only the text (it reports the copy as failed, and leaves those cells): they are made the
        // target's loaded predictions, which its own erase below removes with the rest.
        const cells = native.getSequenceKvCacheMaxPosition!(targetId) + 1;
        const copied = target.contextTokens.length;
        // What it holds of `tokens` (the source may have changed), then one token more: the decode that moves the data.
        let shared = 0;
        while (shared < Math.min(copied, tokens.length - 1) && target.contextTokens[shared] === tokens[shared])
            shared++;
        if (cells > copied && copied === internals._nextTokenIndex && internals._loadedTokenPredictions.length === 0) {
            internals._loadedTokenPredictions.push(...Array.from({length: cells - copied}, () => [0, [0]]));
            internals._nextTokenIndex = cells;
        }
        if (shared > 0) {
            if (internals._nextTokenIndex > shared)
                await target.eraseContextTokenRanges([{start: shared, end: internals._nextTokenIndex}]);
            if (target.contextTokens.length === shared && internals._loadedTokenPredictions.length === 0 &&
                native.getSequenceKvCacheMaxPosition!(targetId) === shared - 1) {
                await target.evaluateWithoutGeneratingNewTokens([tokens[shared]]);
                held = shared + 1;
            }
        }
    } finally {
        if (held === 0) {
            await target.clearHistory();
            // The copy may still be queued in llama.cpp (its data moves at a decode): one decode on the emptied target
            // moves it now, so no state loaded into the target later is overwritten by it.
            await target.evaluateWithoutGeneratingNewTokens([tokens[0]]);
            await target.clearHistory();
        }
    }
    return held;
}

/** Throws a NodeLlamaInternalsError unless the fields copySequenceState uses are there (checked when a model loads). */
export function assertSequenceCopy(sequence: LlamaContextSequence): void {
    if (typeof (sequence as unknown as SequenceInternals)._copyStateFromOtherSequence !== "function")
        throw new NodeLlamaInternalsError("LlamaContextSequence._copyStateFromOtherSequence", "the prompt copy between sequences");
    if (!Array.isArray((sequence as unknown as SequenceInternals)._loadedTokenPredictions))
        throw new NodeLlamaInternalsError("LlamaContextSequence._loadedTokenPredictions", "the prompt copy between sequences");
    if (typeof (sequence as unknown as Partial<CopyInternals>)._nextTokenIndex !== "number")
        throw new NodeLlamaInternalsError("LlamaContextSequence._nextTokenIndex", "the prompt copy between sequences");
    if (typeof (sequence.context as unknown as ContextInternals)._ctx?.getSequenceKvCacheMaxPosition !== "function")
        throw new NodeLlamaInternalsError("LlamaContext._ctx.getSequenceKvCacheMaxPosition", "the prompt copy between sequences");
}

/**
 * Takes a sequence's token predictor (`LlamaContextSequence._tokenPredictor`, fixed when the sequence is
 * made) off it until the returned function puts it back.
 */
export function detachTokenPredictor(sequence: LlamaContextSequence): () => void {
    const internals = sequence as unknown as SequenceInternals;
    if (!("_tokenPredictor" in internals) || internals._tokenPredictor == null)
        throw new NodeLlamaInternalsError("LlamaContextSequence._tokenPredictor", "speculative decoding");
    const predictor = internals._tokenPredictor;
    internals._tokenPredictor = undefined;
    return () => {
        internals._tokenPredictor = predictor;
    };
}

/**
 * llama.cpp's check that `draft` can draft for `target` (same vocabulary: type, size, special tokens, token
 * texts), through the native contexts (`LlamaContext._ctx.ensureDraftContextIsCompatibleForSpeculative`):
 * throws llama.cpp's reason when it cannot.
 */
export function ensureDraftContextCompatible(target: LlamaContext, draft: LlamaContext): void {
    const native = (target as unknown as ContextInternals)._ctx;
    const draftNative = (draft as unknown as ContextInternals)._ctx;
    if (typeof native?.ensureDraftContextIsCompatibleForSpeculative !== "function" || draftNative == null)
        throw new NodeLlamaInternalsError("LlamaContext._ctx.ensureDraftContextIsCompatibleForSpeculative", "draft models");
    native.ensureDraftContextIsCompatibleForSpeculative(draftNative);
}

/**
 * Whether node-llama-cpp carries the project's fix (patches/node-llama-cpp+3.22.1.patch, applied by
 * patch-package when `npm install`/`npm ci` runs), read from `LlamaContextSequence.prototype._speculativeEvaluate`:
 * without it, its speculative evaluation compares each draft token after the first with a list it never fills,
 * so it accepts at most one draft token per step. False, too, when the method is gone.
 */
export function speculationPatched(): boolean {
    const evaluate = (LlamaContextSequence.prototype as unknown as SequencePrototypeInternals)._speculativeEvaluate;
    return typeof evaluate === "function" && evaluate.toString().includes("validatedTokens.push(");
}

/**
 * How node-llama-cpp samples on this context: `native` when its native context has `sampleDraft` (the native build
 * with the project's patch) and its speculative evaluation calls it (the patch's JS part): a step's rows, a draft's
 * included, are sampled by the decode call itself (`decodeBatch` with samples) or else by one `sampleDraft` call;
 * `per-position` otherwise (one native `sampleToken` call per row, after the decode).
 * Read before a wrapper (wrapNativeContext) hides or wraps the function.
 */
export function draftVerificationOf(context: LlamaContext): "native" | "per-position" {
    const native = nativeContextOf(context);
    const evaluate = (LlamaContextSequence.prototype as unknown as SequencePrototypeInternals)._speculativeEvaluate;
    const calls = typeof evaluate === "function" && evaluate.toString().includes("_ctx.sampleDraft(");
    return calls && typeof native.sampleDraft === "function" ? "native" : "per-position";
}

/**
 * Whether this context decodes a step's sampled token while JavaScript hands it out (the native build with the
 * project's patch: `decodeBatch` starts the next decode on a thread of its own, `settlePrefetch` undoes one nobody
 * took); node-llama-cpp's plain evaluation asks for it per step through decodeAheadOption.
 * Read before a wrapper (wrapNativeContext) hides or wraps the function.
 */
export function decodesAhead(context: LlamaContext): boolean {
    const evaluate = (LlamaContextSequence.prototype as unknown as SequencePrototypeInternals)._evaluate;
    return typeof nativeContextOf(context).settlePrefetch === "function" && typeof evaluate === "function" &&
        evaluate.toString().includes("_prefetchNextDecode") && undoesDecodeAhead(context.model) && context.model.llama.gpu !== "vulkan";
}

/**
 * Whether a decode started ahead that nobody takes can be undone on this model's contexts: llama.cpp removes a KV
 * cache's last cell, but a recurrent (mamba, RWKV) or hybrid (Qwen3.5, Qwen3-Next, LFM2, Granite 4 H, Nemotron-H,
 * Jamba...) model keeps one state per sequence, and node-llama-cpp's contexts keep no per-token snapshot of it: the
 * state would stay a token ahead of the sequence and its next decode fail. The patched addon does not decode ahead on
 * them either; nor does its batch dispatch on Vulkan (node-llama-cpp keeps contexts from decoding at once there).
 */
function undoesDecodeAhead(model: LlamaModel): boolean {
    return !model.fileInsights.isRecurrent && !model.fileInsights.isHybrid;
}

/**
 * The evaluate option (node-llama-cpp's private `_prefetchNextDecode`, the project's patch) asking that each step's
 * sampled token be decoded at once, before the caller takes it, when `more()` says the caller will ask for the token
 * after it. Not for a caller that reads a step's logits after its decode call (the logprobs tap): the next decode
 * overwrites them. Without the patch the option is ignored; on a model whose state cannot give a token back
 * (undoesDecodeAhead) it is not given.
 */
export function decodeAheadOption(model: LlamaModel, more: () => boolean): object {
    return undoesDecodeAhead(model) ? {_prefetchNextDecode: more} : {};
}

/**
 * Makes a Jinja wrapper put tool results into the template as they are
 * (`JinjaTemplateChatWrapper._stringifyFunctionResult`): it would JSON-encode them again.
 */
export function keepFunctionResultsAsText(wrapper: JinjaTemplateChatWrapper): void {
    const internals = wrapper as unknown as JinjaWrapperInternals;
    if (typeof internals._stringifyFunctionResult !== "boolean")
        throw new NodeLlamaInternalsError("JinjaTemplateChatWrapper._stringifyFunctionResult", "tool results");
    internals._stringifyFunctionResult = false;
}

/**
 * Makes a Jinja wrapper hand past model responses to the template as they are (`JinjaTemplateChatWrapper._transformChatHistory`,
 * its result's empty thoughts taken out again). Since node-llama-cpp 3.22, when a template's generation prompt opens the
 * thought itself (`openedOnStart`), every model response without a thought segment gets an empty, closed one put in front
 * (and after its function calls), which renders as the thought's closing tag inside the message's content; a template that
 * writes its own empty think block for a past turn (GLM-4.5: `<think></think>` and then `</think>` again) renders it twice.
 * The server's history never carries thought segments (a past answer's reasoning is not sent back), so the responses before
 * the last user message go to the template as the client sent them, as llama-server and transformers render them. In the
 * current turn (assistant messages with tool calls whose results came back), an empty thought that text follows stays:
 * 3.22's splitter relies on it.
 */
export function keepHistoryResponsesAsGiven(wrapper: JinjaTemplateChatWrapper): void {
    const internals = wrapper as unknown as JinjaWrapperInternals;
    const transform = internals._transformChatHistory;
    if (typeof transform !== "function")
        throw new NodeLlamaInternalsError("JinjaTemplateChatWrapper._transformChatHistory", "the chat history");
    internals._transformChatHistory = function (this: JinjaWrapperInternals, ...args: unknown[]) {
        const result = transform.apply(this, args) as {transformedHistory?: unknown};
        if (!Array.isArray(result?.transformedHistory))
            throw new NodeLlamaInternalsError("JinjaTemplateChatWrapper._transformChatHistory's transformedHistory", "the chat history");
        const history = result.transformedHistory as {type: string, response?: unknown[]}[];
        const lastUser = history.findLastIndex((item) => item.type === "user");
        const emptyThought = (part: unknown) => typeof part === "object" && part != null && (part as {type?: unknown}).type === "segment" &&
            (part as {segmentType?: unknown}).segmentType === "thought" && (part as {text?: unknown}).text === "" && (part as {ended?: unknown}).ended === true;
        // The current turn keeps one that text follows (3.22's splitter drops the template's think block before that text
        // otherwise); not one a call follows (it adds a line break before the call).
        const keep = (response: unknown[], at: number, current: boolean) =>
            current && typeof response[at + 1] === "string" && response[at + 1] !== "";
        return {...result, transformedHistory: history.map((item, index) => item.type !== "model" || !Array.isArray(item.response)
            ? item
            : {...item, response: item.response.filter((part, at, response) => !emptyThought(part) || keep(response, at, index > lastUser))})};
    };
}

/**
 * Makes a Jinja wrapper put a tool's result into the prompt as the client sent it (a string), not as a JSON string: where
 * node-llama-cpp renders calls and results itself with the template's extracted format (Qwen3, QwQ), its
 * `generateFunctionCallResult` writes `jsonDumps(result)`, so `sunny` became `"sunny"` and a JSON result an escaped JSON
 * string (llama-server and transformers put the tool message's content in as it is). The result goes through as a marker
 * whose rendering is then replaced by the text.
 */
export function keepFunctionResultsRaw(wrapper: JinjaTemplateChatWrapper): void {
    const render = wrapper.generateFunctionCallResult.bind(wrapper);
    const marker = "\u{F8FF}tool-result\u{F8FF}";
    const rendered = JSON.stringify(marker);
    wrapper.generateFunctionCallResult = (functionName, functionParams, result) => {
        if (typeof result !== "string")
            return render(functionName, functionParams, result);
        const text = render(functionName, functionParams, marker);
        if (!text.values.some((value) => typeof value === "string" && value.includes(rendered)))
            throw new NodeLlamaInternalsError("JinjaTemplateChatWrapper.generateFunctionCallResult writing jsonDumps(result)", "tool results");
        return text.mapValues((value) => typeof value === "string" ? value.split(rendered).join(result) : value);
    };
}

/** The wrapper's template renderer (`JinjaTemplateChatWrapper._jinjaTemplate`), whose `render` the caller may watch. */
export function jinjaRendererOf(wrapper: JinjaTemplateChatWrapper): JinjaRenderer {
    const renderer = (wrapper as unknown as JinjaWrapperInternals)._jinjaTemplate;
    if (renderer == null || typeof renderer.render !== "function")
        throw new NodeLlamaInternalsError("JinjaTemplateChatWrapper._jinjaTemplate", "the generation prompt");
    return renderer as JinjaRenderer;
}

/**
 * Makes a Jinja wrapper hand a call's arguments to the template as they are (an object the template iterates) where
 * node-llama-cpp wraps them in a map of one key (`JinjaTemplateChatWrapper._wrapFunctionParamsInsideMapKey`,
 * `{params: arguments}`: what it does for a template that writes each argument in markup, Qwen3-Coder's and GLM-4.6's,
 * which then rendered a past call as one `params` argument holding JSON). Returns what puts the wrapping back, or null
 * when node-llama-cpp does not wrap them.
 */
export function renderCallArgumentsUnwrapped(wrapper: JinjaTemplateChatWrapper): (() => void) | null {
    const internals = wrapper as unknown as JinjaWrapperInternals;
    if (!("_wrapFunctionParamsInsideMapKey" in internals))
        throw new NodeLlamaInternalsError("JinjaTemplateChatWrapper._wrapFunctionParamsInsideMapKey", "tool calls in markup");
    const key = internals._wrapFunctionParamsInsideMapKey;
    if (key == null)
        return null;
    internals._wrapFunctionParamsInsideMapKey = undefined;
    return () => {
        internals._wrapFunctionParamsInsideMapKey = key;
    };
}

/**
 * Makes a Jinja wrapper render tools, past calls and their results through its template (OpenAI's `tools`, an assistant
 * message's `tool_calls` with its arguments as an object, `tool` messages) where node-llama-cpp did not recognise the
 * template's call format (gpt-oss's harmony: the name in the message header, one call per message): it would write them
 * in its own format into the messages instead. `functions`: the wrapper's call format setting, as node-llama-cpp would
 * have extracted it (read by nothing in the rendering but the tool results' placement of the template's own format).
 */
export function renderCallsThroughTemplate(wrapper: JinjaTemplateChatWrapper, functions: unknown): void {
    const internals = wrapper as unknown as JinjaWrapperInternals;
    for (const field of ["_usingJinjaFunctionCallTemplate", "_stringifyFunctionParams", "_stringifyFunctionResult", "_combineJinjaModelMessageAndToolCalls"] as const)
        if (typeof internals[field] !== "boolean")
            throw new NodeLlamaInternalsError(`JinjaTemplateChatWrapper.${field}`, "tool calls through the template");
    internals._usingJinjaFunctionCallTemplate = true;
    internals._stringifyFunctionParams = false;
    internals._stringifyFunctionResult = false;
    internals._combineJinjaModelMessageAndToolCalls = true;
    (wrapper as unknown as {settings: unknown}).settings = {...wrapper.settings, functions};
}

/**
 * Makes a Jinja wrapper keep the empty think blocks its template writes into the responses after the last user message
 * (Qwen3.5's `<think>\n\n</think>\n\n` before each): node-llama-cpp removes them where the template's generation prompt
 * opens the thought (`settings.segments.thought.openOnResponseStart`), as its own generation writes each response's
 * thought itself; the server renders history as given. The setting is read nowhere else in the wrapper's rendering.
 */
export function keepTemplateThoughtBlocks(wrapper: JinjaTemplateChatWrapper): void {
    const settings = wrapper.settings as {segments?: {thought?: {openOnResponseStart?: boolean}}};
    const thought = settings.segments?.thought;
    if (thought?.openOnResponseStart !== true)
        return;
    (wrapper as unknown as {settings: unknown}).settings = {...settings, segments: {...settings.segments, thought: {...thought, openOnResponseStart: false}}};
}
