import type { LlamaContext, LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import { nativeSamplerFactory, sequenceIdOf, wrapNativeContext, type NativeContext, type NativeSampler, type NativeSampleRequest } from "../../../runtimes/llama/internals.js";
import type { RawDistribution } from "../shared/toTokenLogprob.js";

/** `position`: where in the sequence the sampled token goes (the position after the token whose logits these are). */
type Watcher = {probe: NativeSampler, onSample: (token: Token, distribution: RawDistribution, position: number) => void};

/**
 * Hands the raw next-token distribution of chosen sequences to a listener, without changing what they sample: the
 * model's own (softmax of the raw logits, before any sampling transformation) as node-llama-cpp's native sampler
 * returns it, over the whole vocabulary, most likely first.
 *
 * Why this design: node-llama-cpp's `LlamaChat` exposes no probabilities, and the probabilities
 * its lower layer returns (`evaluateWithMetadata`) are taken after the sampler chain (logit bias,
 * penalties, top-p, temperature), i.e. not the model's distribution OpenAI clients expect. So the
 * native context's sampling calls are wrapped: for a watched sequence, a second native sampler of its
 * own, configured as plain greedy (no bias, penalties or grammar, so the candidates keep the raw
 * logits; greedy draws no random number), is run on the same logits right before the real sampler
 * (`sampleToken`), or after it where the native build samples a step in one call (`sampleDraft`, `decodeBatch`
 * with samples: a sampler copies the logits and never changes them), with `probabilities` on. The real sampler, its configuration and its random number stream are
 * untouched, so the sampled tokens are the same as without logprobs; the only cost is one native
 * sort + softmax over the vocabulary per token (no second decode, unlike a shadow sequence).
 * The batch's logits stay valid until node-llama-cpp has awaited every sampling of the batch
 * (it does, before the next `initBatch`). Which sequence a logit row belongs to is read from what
 * `addToBatch` returns. The internals it reads and wraps are reached through runtimes/llama/internals.ts
 * (pinned down by test/model/llamaInternals.test.ts); `RawDistributionTap.install` fails at startup if they are not there.
 */
export class RawDistributionTap {
    private readonly watchers = new Map<number, Watcher>();
    /** Batch logit row -> the sequence it belongs to and the position its sample goes to. */
    private readonly sequenceOfLogit = new Map<number, {sequenceId: number, position: number}>();

    private constructor(private readonly createProbe: () => NativeSampler, private readonly native: NativeContext) {}

    /**
     * `nativeDrafts`: false hides the native context's `sampleDraft` (internals.ts), so that drafts are verified one
     * position per native call even on a build that has it (tests compare the two paths).
     */
    static install(context: LlamaContext, model: LlamaModel, nativeDrafts = true): RawDistributionTap {
        let tap!: RawDistributionTap;
        wrapNativeContext(context, (native) => {
            tap = new RawDistributionTap(nativeSamplerFactory(model), native);
            return {
                initBatch: (size: number) => {
                    tap.sequenceOfLogit.clear();
                    return native.initBatch(size);
                },
                addToBatch: (sequenceId: number, first: number, tokens: Uint32Array, logitIndexes: Uint32Array) => {
                    const rows = native.addToBatch(sequenceId, first, tokens, logitIndexes);
                    if (tap.watchers.has(sequenceId))
                        for (let index = 0; index < rows.length; index++)
                            tap.sequenceOfLogit.set(rows[index], {sequenceId, position: first + logitIndexes[index] + 1});
                    return rows;
                },
                sampleToken: (row: number, sampler: unknown, ...rest: [boolean?, boolean?]) => tap.sample(row, sampler, rest),
                sampleDraft: nativeDrafts && typeof native.sampleDraft === "function"
                    ? (row: number, draft: Uint32Array, sampler: unknown, ...rest: [boolean?, boolean?]) => tap.sampleDraft(row, draft, sampler, rest)
                    : undefined,
                decodeBatch: (samples?: NativeSampleRequest[]) => tap.decodeBatch(samples)
            };
        });
        return tap;
    }

    /**
     * Until the returned function is called, every token `sequence` samples is reported with its raw distribution
     * and its position first. A speculative step samples at every draft position in one batch: the position says
     * which of those samples a token the generator hands out was (samples of a rejected draft are never used).
     */
    watch(sequence: LlamaContextSequence, onSample: Watcher["onSample"]): () => void {
        const sequenceId = sequenceIdOf(sequence);
        if (this.watchers.has(sequenceId))
            throw new Error(`Sequence ${sequenceId} is already watched`);
        const probe = this.createProbe();
        // temperature 0 = llama.cpp's greedy sampler alone: it only picks the arg max, leaving the logits as they are.
        probe.applyConfig({temperature: 0});
        this.watchers.set(sequenceId, {probe, onSample});
        return () => {
            if (this.watchers.get(sequenceId)?.probe === probe)
                this.watchers.delete(sequenceId);
            // Not while a native sampling may still use it: after the sequence's generator is done.
            probe.dispose();
        };
    }

    private async sample(row: number, sampler: unknown, rest: [boolean?, boolean?]) {
        const logit = this.sequenceOfLogit.get(row);
        const watcher = logit == null ? undefined : this.watchers.get(logit.sequenceId);
        if (watcher == null)
            return this.native.sampleToken(row, sampler, ...rest);
        // One after the other, not concurrently: llama.cpp may reorder its output buffer on the first read of a batch.
        const [, distribution] = await this.native.sampleToken(row, watcher.probe, true, false) as [number, RawDistribution?];
        const result = await this.native.sampleToken(row, sampler, ...rest);
        const token = (Array.isArray(result) ? result[0] : result) as number;
        if (distribution != null && token >= 0)
            watcher.onSample(token as Token, distribution, logit!.position);
        return result;
    }

    /**
     * A draft sampled in one native call: for a watched sequence, each sampled row's raw distribution is read after
     * it (the probe neither changes the logits nor draws a random number) and reported in order.
     */
    private async sampleDraft(row: number, draft: Uint32Array, sampler: unknown, rest: [boolean?, boolean?]) {
        const samples = await this.native.sampleDraft!(row, draft, sampler, ...rest);
        await this.report(row, samples);
        return samples;
    }

    /** Rows sampled by the decode call itself (`decodeBatch` with samples): reported as after `sampleDraft`. */
    private async decodeBatch(requests: NativeSampleRequest[] | undefined) {
        const results = await this.native.decodeBatch(requests);
        if (requests != null && results != null)
            for (let index = 0; index < requests.length; index++)
                await this.report(requests[index][0], results[index] as unknown[] | null);
        return results;
    }

    /** The raw distribution of each row sampled from `row` on, for a watched sequence. */
    private async report(row: number, samples: unknown[] | null | undefined) {
        const logit = this.sequenceOfLogit.get(row);
        const watcher = logit == null ? undefined : this.watchers.get(logit.sequenceId);
        if (samples == null || watcher == null)
            return;
        for (let index = 0; index < samples.length; index++) {
            const result = samples[index];
            const token = (Array.isArray(result) ? result[0] : result) as number;
            const [, distribution] = await this.native.sampleToken(row + index, watcher.probe, true, false) as [number, RawDistribution?];
            if (distribution != null && token >= 0)
                watcher.onSample(token as Token, distribution, logit!.position + index);
        }
    }
}
