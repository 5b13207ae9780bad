/**
 * What verifying a draft costs, in decoding steps: `fixed` once per draft (a larger batch, sampling at each
 * position, erasing what was rejected), `perToken` for each token in it, accepted or not. What an accepted
 * token saves is one step.
 */
export type DraftCost = {fixed: number, perToken: number};

/** Forgetting per draft: slow enough that a lucky draft in free text does not make the next ones long. */
const decay = 0.95;
/** Steps without drafting after a draft that was not worth it; doubles up to the last. */
const pauses = [1, 2, 4, 8, 16, 32, 64];

/** What a DraftLength believes before any draft: accepted tokens and rejections (q = accepted / (accepted + rejected)). */
export type DraftPrior = {accepted: number, rejected: number};

/** The default prior: one accepted token and two rejections (q = 1/3): drafting starts with one-token tries. */
export const cautiousPrior: DraftPrior = {accepted: 1, rejected: 2};

/**
 * How long the next draft should be. A draft ends at its first rejected token, so its value is the chance
 * that each further token is accepted given the one before was, `q`, estimated from the drafts so far
 * (accepted tokens over accepted tokens plus drafts cut short). A k-token draft is expected to save
 * q + q^2 + ... + q^k steps and costs `fixed + k * perToken`; the length with the best margin is chosen.
 * A draft cut short also caps the next one at twice what it had accepted plus two, so the end of a copied
 * passage costs one long draft, not several. When no length pays, drafting pauses and then tries the shortest
 * draft that would pay if accepted whole, after 1, 2, 4 ... 64 steps: text that is not a copy (a free story) pays
 * for a few short drafts, not one per step; a copy (q near 1) gets drafts as long as `max`. Where not even a
 * draft accepted whole would pay (a model whose step costs about what verifying one draft token does), there
 * are no drafts at all.
 */
export class DraftLength {
    private accepted: number;
    private rejected: number;
    private pause = 0;
    private pauseIndex = 0;
    /** Twice the last draft's accepted tokens, plus 2: one rejection keeps the next draft short, whatever q says. */
    private cap = Number.POSITIVE_INFINITY;
    /** After a pause: the shortest draft that would pay if accepted whole, whatever the estimate. */
    private probe = false;

    /** `max`: most tokens a draft may have; `prior`: what is believed before the first draft. */
    constructor(private readonly max: number, prior: DraftPrior = cautiousPrior) {
        this.accepted = prior.accepted;
        this.rejected = prior.rejected;
    }

    /** The chance that a draft token is accepted given the previous one was. */
    get continuation() {
        return this.accepted / (this.accepted + this.rejected);
    }

    /**
     * The shortest draft that pays if accepted whole; infinite where a draft token costs a whole step (a 1 MB
     * model: node-llama-cpp samples each position with its own native call).
     */
    static shortestPaying(cost: DraftCost): number {
        return cost.perToken >= 1 ? Number.POSITIVE_INFINITY : Math.floor(cost.fixed / (1 - cost.perToken)) + 1;
    }

    /** Whether any draft of at most `max` tokens can pay at this cost. */
    static canPay(cost: DraftCost, max: number): boolean {
        return DraftLength.shortestPaying(cost) <= max;
    }

    /** The length for a draft now, at this cost; 0 = do not draft at this step. */
    next(cost: DraftCost): number {
        // Not even a draft accepted whole would pay: no draft, and no tries.
        const shortestPaying = DraftLength.shortestPaying(cost);
        if (shortestPaying > this.max)
            return 0;
        if (this.pause > 0) {
            this.pause--;
            this.probe = this.pause === 0;
            return 0;
        }
        if (this.probe) {
            this.probe = false;
            return shortestPaying;
        }
        const length = Math.min(this.cap, this.bestLength(this.continuation, cost));
        if (length === 0) {
            // This step is the pause's first.
            this.pause = pauses[this.pauseIndex] - 1;
            this.probe = this.pause === 0;
            this.pauseIndex = Math.min(pauses.length - 1, this.pauseIndex + 1);
            return 0;
        }
        this.pauseIndex = 0;
        return length;
    }

    /** The length whose expected saving exceeds its cost by the most; 0 when none does. */
    private bestLength(q: number, {fixed, perToken}: DraftCost): number {
        let best = 0, bestMargin = 0, saved = 0, chance = 1;
        for (let length = 1; length <= this.max; length++) {
            chance *= q;
            saved += chance;
            const margin = saved - fixed - perToken * length;
            if (margin > bestMargin) {
                best = length;
                bestMargin = margin;
            }
        }
        return best;
    }

    /** `accepted` tokens of a `drafted`-token draft were accepted. */
    record(drafted: number, accepted: number) {
        if (drafted === 0)
            return;
        this.accepted = this.accepted * decay + accepted;
        this.rejected = this.rejected * decay + (accepted < drafted ? 1 : 0);
        this.cap = accepted < drafted ? 2 * accepted + 2 : Number.POSITIVE_INFINITY;

    }
}
