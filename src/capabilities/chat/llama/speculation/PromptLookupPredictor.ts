import type { SequenceEvaluateOptions, Token } from "node-llama-cpp";
import { AdaptiveDraftPredictor } from "./AdaptiveDraftPredictor.js";
import type { DraftCost, DraftPrior } from "./DraftLength.js";
import { NgramLookup } from "./NgramLookup.js";
import type { NgramPool } from "./NgramPool.js";

export type PromptLookupOptions = {
    /** Most tokens per draft. */
    maxDraft: number;
    /** Shortest suffix matched (tokens). */
    minNgram: number;
    /** Longest suffix tried first (tokens). */
    maxNgram: number;
    /** What a draft costs in steps of the model (modelDraftCost). */
    cost: DraftCost;
    /** The model's pool of what its sequences read and wrote before (NgramPool), drafted from in greedy generations. */
    pool?: NgramPool;
};

/** The kind of the drafts chained from the pool (the lookup's own kinds are its suffix lengths). */
const poolKind = 0;
/**
 * What pool drafts are believed to be before the first: q = 0.97 (a first draft of 64 tokens at a 56 MB model's cost
 * on one thread, where the cautious prior starts at one): a run of the pool's length (24 tokens) seen before is text
 * written again, not a chance match (llama.cpp's ngram-mod drafts 48 to 64 tokens from one at once).
 */
const poolPrior: DraftPrior = {accepted: 32, rejected: 1};
/** Most prompt tokens a generation adds to the pool (its end): bounds the work at a generation's start. */
const maxPooledPromptTokens = 8192;

/**
 * Prompt-lookup decoding: drafts from NgramLookup over the sequence's whole text, their length learnt per matched suffix
 * length; in a greedy generation, first from the model's pool (NgramPool: what every sequence of the model read and
 * wrote, in earlier requests too) when the text's last tokens are a run it holds. Only greedy: with greedy decoding the
 * drafts decide nothing of the output, while a sampled request draws a random number per verified position, so drafts
 * from other requests would make its seed give other bytes after other requests.
 */
export class PromptLookupPredictor extends AdaptiveDraftPredictor {
    private readonly lookup: NgramLookup;
    private readonly pool: NgramPool | undefined;
    private greedy = false;
    /** Where the next run to add to the pool starts, in the text. */
    private pooled = 0;

    constructor(options: PromptLookupOptions) {
        super(options.maxDraft, options.cost);
        this.lookup = new NgramLookup({minNgram: options.minNgram, maxNgram: options.maxNgram});
        this.pool = options.pool;
    }

    override reset({stateTokens, evaluateOptions}: {stateTokens: Token[], evaluateOptions?: Readonly<SequenceEvaluateOptions>}) {
        this.lookup.reset(stateTokens);
        this.restart();
        this.greedy = !((evaluateOptions?.temperature ?? 0) > 0);
        this.pooled = Math.max(0, stateTokens.length - maxPooledPromptTokens);
        this.addToPool();
    }

    override pushTokens(tokens: Token[]) {
        this.lookup.push(tokens);
        this.observe(tokens);
        this.addToPool();
    }

    override predictTokens(): Token[] {
        if (this.greedy && this.pool != null && this.pool.draft(this.lookup.text, 1).length > 0) {
            const length = this.allowedLength(poolKind);
            if (length > 0)
                return this.proposed(this.pool.draft(this.lookup.text, length), poolKind);
            // Pool drafts paused: the text's own match may still draft.
        }
        const match = this.lookup.match();
        const length = match == null ? 0 : this.allowedLength(match.n);
        return length === 0 ? [] : this.proposed(this.lookup.draft(length, match), match!.n);
    }

    protected override priorOf(kind: number): DraftPrior {
        return kind === poolKind ? poolPrior : super.priorOf(kind);
    }

    private addToPool() {
        if (this.pool == null)
            return;
        this.pool.add(this.lookup.text, this.pooled);
        this.pooled = Math.max(this.pooled, this.lookup.text.length - this.pool.n);
    }
}
