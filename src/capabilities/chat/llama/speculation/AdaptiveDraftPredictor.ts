import { TokenPredictor, type Token } from "node-llama-cpp";
import { cautiousPrior, DraftLength, type DraftCost, type DraftPrior } from "./DraftLength.js";

/**
 * What both of our token predictors share: how long a draft may be (DraftLength, one per kind of draft: a 4-token
 * match inside a copied passage and a 2-token match in free text are accepted at very different rates), learnt from
 * how much of each draft the target accepted, at the model's draft cost in steps (modelDraftCost: fixed when the
 * model loads). Every decision comes from counts of the generation's own tokens and that fixed cost, never from a
 * clock, so the same request drafts the same on a busy machine as on an idle one: a sampled request draws one random
 * number per verified position, so what is drafted decides its output.
 * node-llama-cpp calls `reset` when a generation starts, `pushTokens` with each token the sequence takes, and
 * `predictTokens` before each decode that may verify a draft; the tokens pushed after a draft say how much of
 * it was accepted.
 */
export abstract class AdaptiveDraftPredictor extends TokenPredictor {
    /**
     * Most tokens the next draft may have: what the generation may still take after the token the step samples anyway
     * (its max_tokens less what it has); a draft past it would be evaluated for nothing. Set by the choice (ChoiceSpeculation).
     */
    budget = Number.POSITIVE_INFINITY;
    private readonly lengths = new Map<number, DraftLength>();
    private lastDraft: readonly Token[] = [];
    private lastKind = 0;
    private pushedSinceDraft: Token[] = [];

    constructor(private readonly maxDraft: number, private readonly cost: DraftCost) {
        super();
    }

    /** A new generation: nothing learnt carries over. */
    protected restart() {
        this.lengths.clear();
        this.lastDraft = [];
        this.pushedSinceDraft = [];
    }

    /** Tokens the sequence took (from `pushTokens`). */
    protected observe(tokens: readonly Token[]) {
        if (this.lastDraft.length > 0)
            this.pushedSinceDraft.push(...tokens);
    }

    /**
     * Whether a draft could pay on this model at all (one accepted whole, at the model's draft cost). Where it cannot
     * (a model whose step costs about what verifying one draft token does), generations do without the predictor.
     */
    worthDrafting(): boolean {
        return DraftLength.canPay(this.cost, this.maxDraft);
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
        const length = Math.min(this.budget, this.lengthsOf(kind).next(this.cost));
        // Cut short by the budget below what pays even if accepted whole: no draft.
        return length < DraftLength.shortestPaying(this.cost) ? 0 : length;
    }

    /** The draft handed to node-llama-cpp. */
    protected proposed(draft: Token[], kind: number): Token[] {
        this.lastDraft = draft;
        this.lastKind = kind;
        return draft;
    }

    /** What is believed of a kind of draft before its first: cautious (one-token tries first) unless the kind says more. */
    protected priorOf(_kind: number): DraftPrior {
        return cautiousPrior;
    }

    private lengthsOf(kind: number) {
        let lengths = this.lengths.get(kind);
        if (lengths == null)
            this.lengths.set(kind, lengths = new DraftLength(this.maxDraft, this.priorOf(kind)));
        return lengths;
    }
}
