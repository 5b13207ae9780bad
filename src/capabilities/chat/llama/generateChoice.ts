import type { LlamaContextSequence, LlamaGrammar, LlamaModel, Token, TokenBias } from "node-llama-cpp";
import { LlamaGrammarEvaluationState } from "node-llama-cpp";
import type { FinishReason, TokenLogprob } from "../ChatEngine.js";
import type { DecodeStepBarrier } from "./DecodeStepBarrier.js";
import { promptChunks } from "./promptChunks.js";
import { reusePromptPrefix } from "./reusePromptPrefix.js";
import { ChoiceText } from "./ChoiceText.js";
import type { RawDistribution, RawDistributionTap } from "./RawDistributionTap.js";
import type { TokenBytes } from "./TokenBytes.js";
import { toTokenLogprob } from "./toTokenLogprob.js";

export type ChoiceSettings = {
    model: LlamaModel;
    sequence: LlamaContextSequence;
    promptTokens: readonly Token[];
    /** Already clamped to what fits in the sequence's context. */
    maxTokens: number;
    stop: readonly string[];
    temperature: number;
    topP: number;
    /** 0 = the whole vocabulary (OpenAI's semantics). */
    topK?: number;
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
};

export type ChoiceOutcome = {
    text: string, finishReason: FinishReason, completionTokens: number, logprobs?: TokenLogprob[],
    /** The stop sequence that ended the text, if one did. */
    stopSequence?: string,
    /** Prompt tokens whose KV cache was reused rather than evaluated. */
    cachedPromptTokens: number
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
    }
    signal.throwIfAborted();

    const generated: Token[] = [];
    const output = new ChoiceText(model, promptTokens, settings.stop, settings.onText);
    const penalize = settings.frequencyPenalty !== 0 || settings.presencePenalty !== 0;
    let finishReason: FinishReason = "length";
    // The distribution of the token the sequence samples next, reported just before the generator yields that token.
    let sampled: {token: Token, distribution: RawDistribution} | undefined;

    const tokens = sequence.evaluate(promptTokens.slice(last.start, last.end), {
        temperature: settings.temperature,
        topK: settings.topK ?? 0,
        topP: settings.topP,
        minP: 0,
        seed: settings.seed,
        tokenBias: settings.tokenBias,
        grammarEvaluationState: settings.grammar == null
            ? undefined
            : new LlamaGrammarEvaluationState({model, grammar: settings.grammar}),
        repeatPenalty: penalize
            ? {
                punishTokens: () => generated,
                penalty: 1,
                frequencyPenalty: settings.frequencyPenalty,
                presencePenalty: settings.presencePenalty,
                // A constant window (the whole completion) keeps the native sampler incremental.
                maxPunishTokens: Math.max(1, settings.maxTokens)
            }
            : undefined,
        yieldEogToken: true,
        contextShift: {
            // The token budget keeps generation inside the context; shifting would silently
            // drop the start of the conversation, so it is a bug if it is ever asked for.
            size: () => {
                throw new Error("Context shift requested: the generation budget is wrong");
            }
        }
    });

    const unwatch = settings.logprobs?.tap.watch(sequence, (token, distribution) => sampled = {token, distribution});
    const iterator = tokens[Symbol.asyncIterator]();
    let joined = false;
    let pending: Promise<IteratorResult<Token>> | undefined = iterator.next();
    try {
        while (pending != null) {
            const result = await pending;
            pending = undefined;
            if (result.done)
                break;
            const token = result.value;
            if (model.isEogToken(token) || output.stopped) {
                finishReason = "stop";
                break;
            }
            generated.push(token);
            if (settings.logprobs == null)
                output.add(token);
            else {
                if (sampled?.token !== token)
                    throw new Error(`No raw distribution was reported for sampled token ${token}`);
                const {distribution} = sampled;
                const {topLogprobs, bytes} = settings.logprobs;
                output.add(token, () => toTokenLogprob(token, distribution, topLogprobs, bytes));
            }
            sampled = undefined;
            if (generated.length >= settings.maxTokens)
                break;
            signal.throwIfAborted();
            if (!joined) {
                settings.stepBarrier.join();
                joined = true;
            }
            await settings.stepBarrier.arrive();
            pending = iterator.next();
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
    }
    return {
        text: output.text, finishReason, completionTokens: output.stopped ? output.tokenCount : generated.length, cachedPromptTokens,
        ...(output.stopSequence != null ? {stopSequence: output.stopSequence} : {}),
        ...(settings.logprobs == null ? {} : {logprobs: output.logprobs})
    };
}
