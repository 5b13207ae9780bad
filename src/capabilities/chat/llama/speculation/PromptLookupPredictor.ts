import type { Token } from "node-llama-cpp";
import { AdaptiveDraftPredictor } from "./AdaptiveDraftPredictor.js";
import type { DraftCost } from "./DraftLength.js";
import { NgramLookup } from "./NgramLookup.js";

export type PromptLookupOptions = {
    /** Most tokens per draft. */
    maxDraft: number;
    /** Shortest suffix matched (tokens). */
    minNgram: number;
    /** Longest suffix tried first (tokens). */
    maxNgram: number;
    /** What a draft costs in steps of the model (modelDraftCost). */
    cost: DraftCost;
};

/** Prompt-lookup decoding: drafts from NgramLookup over the sequence's whole text, their length learnt per matched suffix length. */
export class PromptLookupPredictor extends AdaptiveDraftPredictor {
    private readonly lookup: NgramLookup;

    constructor(options: PromptLookupOptions) {
        super(options.maxDraft, options.cost);
        this.lookup = new NgramLookup({minNgram: options.minNgram, maxNgram: options.maxNgram});
    }

    override reset({stateTokens}: {stateTokens: Token[]}) {
        this.lookup.reset(stateTokens);
        this.restart();
    }

    override pushTokens(tokens: Token[]) {
        this.lookup.push(tokens);
        this.observe(tokens);
    }

    override predictTokens(): Token[] {
        const match = this.lookup.match();
        const length = match == null ? 0 : this.allowedLength(match.n);
        return length === 0 ? [] : this.proposed(this.lookup.draft(length, match), match!.n);
    }
}
