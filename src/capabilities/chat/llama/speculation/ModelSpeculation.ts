import type { Llama, LlamaContext, LlamaContextSequence } from "node-llama-cpp";
import { DraftLength, type DraftCost } from "./DraftLength.js";
import { DraftModelPredictor } from "./DraftModelPredictor.js";
import { loadDraftModel, type DraftModel } from "./loadDraftModel.js";
import { modelDraftCost } from "./modelDraftCost.js";
import { NgramPool } from "./NgramPool.js";
import { PromptLookupPredictor } from "./PromptLookupPredictor.js";
import { SpeculationCounters, type SpeculationStats } from "./SpeculationCounters.js";
import type { DraftVerification, SpeculativeOptions } from "./SpeculativeOptions.js";
import { draftVerificationOf, speculationPatched } from "../../../../runtimes/llama/internals.js";
import { SwitchablePredictor } from "./SwitchablePredictor.js";

/** Prompt lookup matches the last 2 to 4 tokens: one token matches everywhere in vain, longer suffixes rarely. */
const lookupNgrams = {minNgram: 2, maxNgram: 4};
/** The pool's runs: 24 tokens, as llama.cpp's ngram-mod (a run that long seen again is text written again). */
const poolNgram = 24;

/**
 * A chat model's speculative decoding (the engine's side): its draft model if it has one, the predictor of
 * each of its sequences, and the counts /health and /metrics show.
 */
export class ModelSpeculation {
    private readonly predictors = new Map<LlamaContextSequence, SwitchablePredictor>();
    private readonly counters = new SpeculationCounters();
    /** What the model's sequences read and wrote (prompt lookup), made with the first sequence. */
    private pool: NgramPool | null = null;

    /** What a draft costs in steps of the target (its draft model's steps included), fixed at load. */
    private readonly cost: DraftCost;

    private constructor(readonly options: SpeculativeOptions, private readonly draft: DraftModel | null, targetWeightBytes: number,
        readonly verification: DraftVerification) {
        const own = options.cost ?? modelDraftCost(targetWeightBytes, 0, verification);
        // Each draft token also costs a step of the draft model, roughly its share of the weights read per step.
        this.cost = draft == null ? own : {...own, perToken: own.perToken + draft.stepShare};
    }

    /**
     * `target`: the model's context (made first, its native context not yet replaced) and file. A draft model of another
     * vocabulary is refused here.
     */
    static async load(llama: Llama, target: {context: LlamaContext, modelPath: string}, options: SpeculativeOptions | undefined,
        runtime: {threads: number, gpuLayers: "auto" | "max" | number, flashAttention: boolean | "auto"}): Promise<ModelSpeculation> {
        const resolved = options ?? {mode: "off", draftMax: 0};
        const verification = resolved.verification === "per-position" ? "per-position" : draftVerificationOf(target.context);
        const draft = resolved.mode === "draft" ? await loadDraftModel(llama, target, {modelPath: resolved.draftModelPath!, ...runtime}) : null;
        return new ModelSpeculation(resolved, draft, target.context.model.size, verification);
    }

    get mode() {
        return this.options.mode;
    }

    /** A sequence of `context` with the predictor of the mode (none when off). */
    createSequence(context: LlamaContext): LlamaContextSequence {
        const predictor = this.createPredictor();
        const sequence = context.getSequence(predictor == null ? {} : {tokenPredictor: predictor});
        if (predictor != null)
            this.predictors.set(sequence, predictor);
        return sequence;
    }

    /**
     * For a choice on `sequence`: what generateChoice gets (none when the mode is off), and a function to call
     * after the choice, which counts what it drafted. `allowed`: the request lets drafts be verified exactly.
     */
    forChoice(sequence: LlamaContextSequence, allowed: boolean): {settings?: {predictor: SwitchablePredictor, active: boolean}, done: () => void} {
        const predictor = this.predictors.get(sequence);
        if (predictor == null)
            return {done: () => {}};
        return {settings: {predictor, active: allowed}, done: allowed ? this.counters.track(sequence, predictor) : () => {}};
    }

    /** The draft model's sequence beside `sequence` (mode `draft`), else null: its state is saved and restored with the target's (SavedPromptStates). */
    draftSequenceOf(sequence: LlamaContextSequence): LlamaContextSequence | null {
        const inner = this.predictors.get(sequence)?.inner;
        return inner instanceof DraftModelPredictor ? inner.draftSequence : null;
    }

    /** The draft model's file and context size (none without one): a saved draft state belongs to them. */
    draftIdentity(): {modelPath: string, contextSize: number} | null {
        return this.draft == null ? null : {modelPath: this.options.draftModelPath!, contextSize: this.draft.context.contextSize};
    }

    stats(): {mode: SpeculativeOptions["mode"]} & SpeculationStats {
        return {mode: this.options.mode, ...this.counters.stats()};
    }

    /** For the Loaded log line. */
    describe(): string {
        const {mode, draftMax} = this.options;
        if (mode === "off")
            return mode;
        if (!speculationPatched())
            return `${mode} (node-llama-cpp is not patched: run npm install; at most one draft token per step)`;
        return DraftLength.canPay(this.cost, draftMax) ? mode : `${mode} (no draft can pay on a model this small: decoding one token per step)`;
    }

    /** After the target's context (which disposes the predictors). */
    async dispose() {
        await this.draft?.context.dispose();
        await this.draft?.model.dispose();
    }

    private createPredictor(): SwitchablePredictor | null {
        const {mode, draftMax} = this.options;
        if (mode === "lookup")
            return new SwitchablePredictor(new PromptLookupPredictor({maxDraft: draftMax, cost: this.cost, ...lookupNgrams, pool: this.pool ??= new NgramPool(poolNgram)}));
        if (mode === "draft")
            return new SwitchablePredictor(new DraftModelPredictor(this.draft!.context.getSequence(), {maxDraft: draftMax, cost: this.cost, pMin: this.options.draftPMin ?? 0}));
        return null;
    }
}
