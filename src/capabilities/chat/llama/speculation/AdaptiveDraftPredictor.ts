import { TokenPredictor, type Token } from "node-llama-cpp";
import { DraftLength } from "./DraftLength.js";

export type DraftTiming = {
    /** What a draft costs beside a plain step, whatever the model: node-llama-cpp's own work per verification (ms). */
    fixedMs: number;
    /** The same per draft token (ms): a batch row and a sampling. */
    perTokenMs: number;
    /** Per draft token, in steps of the target: verifying it in the batch, and a draft model's own step. */
    perTokenSteps: number;
};

/**
 * Weights of a timed plain step in the average: a faster step counts much, a slower one little, so the average
 * follows the model's speed rather than pauses of the event loop (a response's first writes, a collection).
 */
const fasterStepWeight = 0.5;
const slowerStepWeight = 0.05;
const fastestDrift = 0.01;

/**
 * What both of our token predictors share: how long a draft may be (DraftLength, one per kind of draft: a
 * 4-token match inside a copied passage and a 2-token match in free text are accepted at very different rates),
 * learnt from how much of each draft the target accepted, at a cost in steps that depends on how long a plain
 * step takes: node-llama-cpp's fixed work per verification is most of a step for a 1 MB model (under a
 * millisecond per token) and nothing for one whose step takes 10 ms. The plain step is timed between calls (an
 * estimate for choosing lengths only: what is generated never depends on it).
 * node-llama-cpp calls `reset` when a generation starts, `pushTokens` with each token the sequence takes, and
 * `predictTokens` before each decode that may verify a draft; the tokens pushed after a draft say how much of
 * it was accepted.
 */
export abstract class AdaptiveDraftPredictor extends TokenPredictor {
    private readonly lengths = new Map<number, DraftLength>();
    private lastDraft: readonly Token[] = [];
    private lastKind = 0;
    private pushedSinceDraft: Token[] = [];
    /** Exponential average of a step without a draft (ms; null until one was timed), and when the last step began with no draft. */
    private plainStepMs: number | null = null;
    private plainStepStarted: number | null = null;
    /** The fastest plain step seen, drifting up slowly: the model's own speed, whatever the prompt's length. */
    private fastestPlainStepMs: number | null = null;

    constructor(private readonly maxDraft: number, private readonly timing: DraftTiming) {
        super();
    }

    /** A new generation: nothing learnt carries over. */
    protected restart() {
        this.lengths.clear();
        this.lastDraft = [];
        this.pushedSinceDraft = [];
        this.plainStepStarted = null;
    }

    /** Tokens the sequence took (from `pushTokens`). */
    protected observe(tokens: readonly Token[]) {
        if (this.lastDraft.length > 0)
            this.pushedSinceDraft.push(...tokens);
    }

    /** Call first in every `predictTokens`: a decoding step begins (and the last one, if plain, is timed). */
    protected stepBegins() {
        const now = performance.now();
        if (this.plainStepStarted != null)
            this.timedPlainStep(now - this.plainStepStarted);
        this.plainStepStarted = now;
    }

    /** A step without a draft took `ms` (timed here, or by the generation loop while no predictor is attached). */
    timedPlainStep(ms: number) {
        this.plainStepMs = this.plainStepMs == null
            ? ms
            : this.plainStepMs + (ms < this.plainStepMs ? fasterStepWeight : slowerStepWeight) * (ms - this.plainStepMs);
        this.fastestPlainStepMs = this.fastestPlainStepMs == null || ms < this.fastestPlainStepMs
            ? ms
            : this.fastestPlainStepMs + fastestDrift * (ms - this.fastestPlainStepMs);
    }

    /**
     * Whether a draft could pay on this model at all (one accepted whole, at the draft cost of its fastest plain
     * steps); true until a plain step was timed. Where it cannot, generations do without the predictor.
     */
    worthDrafting(): boolean {
        return this.fastestPlainStepMs == null || DraftLength.canPay(this.costNow(this.fastestPlainStepMs), this.maxDraft);
    }

    private costNow(plainStepMs: number) {
        const {fixedMs, perTokenMs, perTokenSteps} = this.timing;
        return {fixed: fixedMs / plainStepMs, perToken: perTokenMs / plainStepMs + perTokenSteps};
    }

    /** The length a draft of this kind may have now (0: none), after learning from the last draft. */
    protected allowedLength(kind: number): number {
        if (this.lastDraft.length > 0) {
            let accepted = 0;
            while (accepted < this.lastDraft.length && this.pushedSinceDraft[accepted] === this.lastDraft[accepted])
                accepted++;
            this.lengthsOf(this.lastKind).record(this.lastDraft.length, accepted);
            this.lastDraft = [];
            this.pushedSinceDraft = [];
        }
        // No draft before a plain step was timed (the first step of a generation).
        if (this.plainStepMs == null)
            return 0;
        return this.lengthsOf(kind).next(this.costNow(this.plainStepMs));
    }

    /** The draft handed to node-llama-cpp. */
    protected proposed(draft: Token[], kind: number): Token[] {
        // A step that verifies a draft is not a plain step.
        if (draft.length > 0)
            this.plainStepStarted = null;
        this.lastDraft = draft;
        this.lastKind = kind;
        return draft;
    }

    private lengthsOf(kind: number) {
        let lengths = this.lengths.get(kind);
        if (lengths == null)
            this.lengths.set(kind, lengths = new DraftLength(this.maxDraft));
        return lengths;
    }
}
