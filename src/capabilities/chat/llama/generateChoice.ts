import type { LlamaContextSequence, LlamaGrammar, LlamaModel, Token, TokenBias } from "node-llama-cpp";
import { LlamaGrammarEvaluationState } from "node-llama-cpp";
import type { FinishReason, ReasoningFormat, TokenLogprob } from "../ChatEngine.js";
import type { DecodeStepBarrier } from "./DecodeStepBarrier.js";
import { promptChunks } from "./promptChunks.js";
import { reusePromptPrefix } from "./reusePromptPrefix.js";
import { ChoiceText } from "../shared/ChoiceText.js";
import type { RawDistributionTap } from "./RawDistributionTap.js";
import type { RawDistribution } from "../shared/toTokenLogprob.js";
import { TokenTextDecoder } from "../shared/TokenTextDecoder.js";
import { llamaDetokenize } from "./llamaTokenizerParts.js";
import { decodeAheadOption } from "../../../runtimes/llama/internals.js";
import type { TokenBytes } from "./TokenBytes.js";
import { toTokenLogprob } from "../shared/toTokenLogprob.js";
import { ReasoningPhase, type ReasoningStart } from "./ReasoningPhase.js";
import type { SwitchablePredictor } from "./speculation/SwitchablePredictor.js";
import { ChoiceSpeculation } from "./speculation/ChoiceSpeculation.js";

export type ChoiceSettings = {
    model: LlamaModel;
    sequence: LlamaContextSequence;
    promptTokens: readonly Token[];
    /** Control tokens the output keeps as text (llamaDetokenize): the markup of the model's calls and reasoning. */
    preservedTokens?: ReadonlySet<Token>;
    /** Already clamped to what fits in the sequence's context. */
    maxTokens: number;
    stop: readonly string[];
    temperature: number;
    topP: number;
    /** 0 = the whole vocabulary (OpenAI's semantics). */
    topK?: number;
    minP?: number;
    /** llama.cpp's repetition penalty over the last `lastN` tokens of the prompt and the completion (SamplingOptions.repeatPenalty). */
    repeatPenalty?: {penalty: number, lastN: number};
    /** uint32 */
    seed: number;
    frequencyPenalty: number;
    presencePenalty: number;
    tokenBias?: TokenBias;
    grammar?: LlamaGrammar;
    /** Prompt tokens evaluated per step, so an abort is noticed between steps. */
    promptChunkSize: number;
    /** Prompt tokens whose KV cache the sequence keeps (prompt cache, see SequencePrefixCache); default 0. */
    keptPromptTokens?: number;
    /** Shared by the sequences of one context, to decode in shared batches. */
    stepBarrier: DecodeStepBarrier;
    signal: AbortSignal;
    /** Report a logprobs entry (with this many alternatives) for every token; needs `tap`. */
    logprobs?: {topLogprobs: number, tap: RawDistributionTap, bytes: TokenBytes};
    onText: (text: string, logprobs?: TokenLogprob[]) => void;
    /** The sequence holds more of the prompt: after each chunk, and the whole of it with the first token. */
    onPromptProgress?: () => void;
    /**
     * A thinking model: where its output starts; the grammar applies only after the think block; after
     * `budgetTokens` tokens inside the block the engine writes `closeTokens` itself (the answer begins). `closeOn`: the
     * tokens that end the block where the model writes one of them (or an end of generation) are replaced by
     * `closeTokens` too, after which the answer begins whatever they are (gpt-oss's forced call: its analysis ends with
     * the engine opening the call message, whose name and arguments the grammar then writes).
     */
    reasoning?: {format: ReasoningFormat, start: ReasoningStart, budgetTokens: number | null, closeTokens: readonly Token[], closeOn?: ReadonlySet<Token>};
    /** The sequence's token predictor (speculative decoding), and whether this choice may draft. */
    speculation?: {predictor: SwitchablePredictor, active: boolean};
};

export type ChoiceOutcome = {
    text: string, finishReason: FinishReason, completionTokens: number, logprobs?: TokenLogprob[],
    /** The stop sequence that ended the text, if one did. */
    stopSequence?: string,
    /** Prompt tokens whose KV cache was reused rather than evaluated. */
    cachedPromptTokens: number,
    /** A thinking model's tokens before its answer (tags included). */
    reasoningTokens?: number
};

/**
 * Generates one choice on one context sequence, which it clears first except for the first
 * `keptPromptTokens` of the prompt. Sampling is configured for
 * OpenAI semantics rather than node-llama-cpp's defaults: no top-k (0 = whole vocabulary), no
 * min-p, no multiplicative repeat penalty, penalties counted over the generated tokens only.
 */
export async function generateChoice(settings: ChoiceSettings): Promise<ChoiceOutcome> {
    const {model, sequence, promptTokens, signal} = settings;
    const cachedPromptTokens = settings.keptPromptTokens ?? 0;
    await reusePromptPrefix(sequence, cachedPromptTokens);
    // A zero budget (legacy completions scoring a prompt with echo) evaluates nothing more; the
    // sequence then holds only the kept prefix, which is what the prompt cache is told it holds.
    if (settings.maxTokens <= 0)
        return {text: "", finishReason: "length", completionTokens: 0, cachedPromptTokens, ...(settings.logprobs == null ? {} : {logprobs: []})};

    // The prompt is evaluated in chunks so an abort is noticed between them; the last chunk goes
    // to the generator below, whose first sample is the first completion token.
    const chunks = promptChunks(promptTokens.length, cachedPromptTokens, settings.promptChunkSize);
    const last = chunks.pop()!;
    for (const chunk of chunks) {
        signal.throwIfAborted();
        await sequence.evaluateWithoutGeneratingNewTokens(promptTokens.slice(chunk.start, chunk.end));
        settings.onPromptProgress?.();
    }
    signal.throwIfAborted();

    const generated: Token[] = [];
    const output = new ChoiceText(new TokenTextDecoder(llamaDetokenize(model, settings.preservedTokens), promptTokens), settings.stop, settings.onText);
    const penalize = settings.frequencyPenalty !== 0 || settings.presencePenalty !== 0 || settings.repeatPenalty != null;
    // The penalties' window, constant (it keeps the native sampler incremental): the whole completion (OpenAI's
    // penalties); with llama.cpp's repetition penalty, its last `repeat_last_n` tokens of the prompt and the completion
    // (llama-server feeds the prompt through its sampler first), as llama.cpp applies all three penalties.
    const penalized: Token[] = settings.repeatPenalty == null ? generated : promptTokens.slice(-Math.min(settings.repeatPenalty.lastN, promptTokens.length));
    const window = Math.max(1, Math.min(settings.repeatPenalty?.lastN ?? Infinity, penalized.length + settings.maxTokens));
    let finishReason: FinishReason = "length";
    // The distribution of each token the sequence samples, by the position the token goes to (a speculative
    // step samples several positions at once, and those after a rejected draft token are never handed out).
    const sampled = new Map<number, {token: Token, distribution: RawDistribution}>();
    // A thinking model's grammar starts with its answer: a fresh state, made when the think block has closed.
    const phase = settings.reasoning == null ? null : new ReasoningPhase(settings.reasoning.start, settings.reasoning.format);
    let grammarState: LlamaGrammarEvaluationState | undefined;
    const answerGrammar = () => settings.grammar == null || phase?.inAnswer === false
        ? undefined
        : grammarState ??= new LlamaGrammarEvaluationState({model, grammar: settings.grammar});

    const speculation = settings.speculation == null ? null : new ChoiceSpeculation(sequence, settings.speculation.predictor, settings.speculation.active, settings.maxTokens);
    const tokens = sequence.evaluate(promptTokens.slice(last.start, last.end), {
        temperature: settings.temperature,
        topK: settings.topK ?? 0,
        topP: settings.topP,
        minP: settings.minP ?? 0,
        seed: settings.seed,
        tokenBias: settings.tokenBias,
        grammarEvaluationState: settings.grammar == null ? undefined : answerGrammar,
        repeatPenalty: penalize
            ? {
                // node-llama-cpp widens the window to the tokens given: only the window's own go.
                punishTokens: () => window >= penalized.length ? penalized : penalized.slice(-window),
                penalty: settings.repeatPenalty?.penalty ?? 1,
                frequencyPenalty: settings.frequencyPenalty,
                presencePenalty: settings.presencePenalty,
                maxPunishTokens: window
            }
            : undefined,
        yieldEogToken: true,
        // The native build decodes each sampled token while this loop takes it, unless it is the last one asked for, the
        // next step is likely to verify a draft, or the logprobs tap reads the step's logits after its decode
        ...(settings.logprobs == null ? decodeAheadOption(model, () => generated.length + 1 < settings.maxTokens && (speculation?.decodeAhead() ?? true)) : {}),
        contextShift: {
            // The token budget keeps generation inside the context; shifting would silently
            // drop the start of the conversation, so it is a bug if it is ever asked for.
            size: () => {
                throw new Error("Context shift requested: the generation budget is wrong");
            }
        }
    });

    const unwatch = settings.logprobs?.tap.watch(sequence, (token, distribution, position) => sampled.set(position, {token, distribution}));
    const iterator = tokens;
    let joined = false;
    let pending: Promise<IteratorResult<Token>> | undefined = iterator.next();
    try {
        while (pending != null) {
            const result: IteratorResult<Token> = await pending;
            pending = undefined;
            if (result.done)
                break;
            const token: Token = result.value;
            if (generated.length === 0)
                settings.onPromptProgress?.();
            // A thought over its budget, or ended where the engine closes it (`closeOn`): the token sampled is dropped and
            // the block's closing written instead, which the sequence evaluates next (node-llama-cpp's replacement input).
            const budget = settings.reasoning?.budgetTokens;
            const closeOn = settings.reasoning?.closeOn;
            const ending: boolean = closeOn != null && phase?.inReasoning === true && !output.stopped && (closeOn.has(token) || model.isEogToken(token));
            // (As many of them as `maxTokens` leaves room for: the rest would go past it.)
            const forced: readonly Token[] | null = phase != null && phase.inReasoning && ((budget != null && phase.thinkingTokens >= budget) || ending)
                ? settings.reasoning!.closeTokens.slice(0, settings.maxTokens - generated.length)
                : null;
            if (forced == null && (model.isEogToken(token) || output.stopped)) {
                finishReason = "stop";
                break;
            }
            for (const next of forced ?? [token]) {
                // Stop sequences are the answer's: a thinking model's reasoning and markup are not searched (Qwen3's
                // `</think>\n\n` would end every answer at a "\n\n" stop).
                const search = phase?.push(model.detokenize([next], true)) ?? "search";
                generated.push(next);
                if (penalized !== generated)
                    penalized.push(next);
                if (settings.logprobs == null)
                    output.add(next, undefined, search);
                else if (forced != null)
                    output.add(next, () => forcedLogprob(next, settings.logprobs!.bytes), search);
                else {
                    const position = promptTokens.length + generated.length - 1;
                    const sample = sampled.get(position);
                    sampled.delete(position);
                    if (sample?.token !== next)
                        throw new Error(`No raw distribution was reported for sampled token ${next}`);
                    const {distribution} = sample;
                    const {topLogprobs, bytes} = settings.logprobs;
                    output.add(next, () => toTokenLogprob(next, distribution, topLogprobs, bytes), search);
                }
            }
            if (forced != null && closeOn != null)
                phase?.answerFromHere();
            if (generated.length >= settings.maxTokens)
                break;
            signal.throwIfAborted();
            if (!joined) {
                settings.stepBarrier.join();
                joined = true;
            }
            await settings.stepBarrier.arrive();
            speculation?.remaining(settings.maxTokens - generated.length);
            pending = forced == null ? iterator.next() : iterator.next([...forced]);
        }
        output.finish();
        if (output.stopped)
            finishReason = "stop";
    } catch (error) {
        output.close();
        throw error;
    } finally {
        if (joined)
            settings.stepBarrier.leave();
        // Let go of the sequence only once its generator is done with it.
        void pending?.catch(() => {});
        await iterator.return(undefined).catch(() => {});
        unwatch?.();
        await speculation?.end();
    }
    return {
        text: output.text, finishReason, completionTokens: output.stopped ? output.tokenCount : generated.length, cachedPromptTokens,
        ...(output.stopSequence != null ? {stopSequence: output.stopSequence} : {}),
        ...(phase == null ? {} : {reasoningTokens: phase.reasoningTokens}),
        ...(settings.logprobs == null ? {} : {logprobs: output.logprobs})
    };
}

/** The entry of a token the engine wrote itself (a think block's closing tag): certain, with no alternatives. */
function forcedLogprob(token: Token, bytes: TokenBytes): TokenLogprob {
    const tokenBytes = [...bytes.of(token)];
    return {token: Buffer.from(tokenBytes).toString("utf8"), logprob: 0, bytes: tokenBytes, topLogprobs: []};
}
