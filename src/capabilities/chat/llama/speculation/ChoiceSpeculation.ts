import type { LlamaContextSequence } from "node-llama-cpp";
import { detachTokenPredictor } from "../../../../runtimes/llama/internals.js";
import { dropUnusedPredictions } from "./dropUnusedPredictions.js";
import type { SwitchablePredictor } from "./SwitchablePredictor.js";
import { unusedPredictions } from "./unusedPredictions.js";

/** Empty predictions in a row before a drafting choice decodes ahead (ChoiceSpeculation.decodeAhead). */
const quietStepsBeforeDecodeAhead = 8;

/**
 * One choice's side of speculative decoding (generateChoice). Drafts are verified inside node-llama-cpp's
 * generator, whose tokens still come out one by one, each the model's own pick. A choice that may not draft
 * (`allowed` false: penalties, a grammar after a thought) or whose model is too small for drafts to pay (decided
 * from the model's size at load, never from a clock) generates without the predictor on its sequence; a choice that
 * drafted removes the verified draft tokens it did not use when it ends.
 */
export class ChoiceSpeculation {
    private readonly drafting: boolean;
    private readonly reattach: (() => void) | null;
    private readonly predictionsBefore: LlamaContextSequence["tokenPredictions"];

    /** Before the choice's generator is made; `maxTokens`: most tokens the choice may generate. */
    constructor(private readonly sequence: LlamaContextSequence, private readonly predictor: SwitchablePredictor, allowed: boolean, maxTokens: number) {
        this.drafting = allowed && predictor.inner.worthDrafting();
        predictor.active = this.drafting;
        this.remaining(maxTokens);
        this.reattach = this.drafting ? null : detachTokenPredictor(sequence);
        this.predictionsBefore = sequence.tokenPredictions;
    }

    /**
     * Whether a step's sampled token may be decoded while the choice takes it (node-llama-cpp's native build starts the
     * next step's decode at once, decodeAheadOption): that decode is the next step's only if the next step verifies no
     * draft; otherwise it is waited for and undone, a step's work lost. So only once the predictor has found nothing for
     * `quietStepsBeforeDecodeAhead` steps in a row (free text, not a copy), or without drafts at all. Counts only, so
     * the same request decides the same whatever the machine's load; it changes nothing of the output. Never for a
     * drafting choice on a sequence that needs checkpoints (sliding-window models): node-llama-cpp's speculative
     * evaluation takes a checkpoint before every step's decode, which first waits for the decode ahead and undoes it.
     */
    decodeAhead(): boolean {
        return !this.drafting || (!this.sequence.needsCheckpoints && this.predictor.emptyInARow >= quietStepsBeforeDecodeAhead);
    }

    /** Before each step: the choice may still generate `tokens` tokens, one of them the step's own sample. */
    remaining(tokens: number) {
        this.predictor.inner.budget = tokens - 1;
    }

    /**
     * Once the generator is done with the sequence. The predictor is switched off until the sequence's next choice
     * switches it on: the next request's prompt chunks, evaluated before that, would otherwise reset it once per chunk
     * (the lookup indexing, and the pool taking in, the whole text again each time).
     */
    async end() {
        this.predictor.inner.budget = Number.POSITIVE_INFINITY;
        this.predictor.active = false;
        this.reattach?.();
        if (this.drafting && unusedPredictions(this.sequence, this.predictionsBefore) > 0)
            await dropUnusedPredictions(this.sequence);
    }
}
