import { TokenPredictor, type Token } from "node-llama-cpp";
import { DraftLength, type DraftLengthOptions } from "./DraftLength.js";
import { NgramLookup } from "./NgramLookup.js";

export type PromptLookupOptions = {
    /** Most tokens per draft. */
    maxDraft: number;
    /** Shortest suffix matched (tokens). */
    minNgram: number;
    /** Longest suffix tried first (tokens). */
    maxNgram: number;
    /** See DraftLength. */
    cost: DraftLengthOptions["cost"];
};

/**
 * node-llama-cpp's token predictor for prompt-lookup decoding: drafts from NgramLookup over the sequence's
 * whole text, their length adapted by DraftLength, one per matched suffix length: a 4-token match inside a
 * copied passage and a 2-token match in free text are accepted at very different rates. node-llama-cpp calls `reset` with the sequence's tokens
 * when a generation starts, `pushTokens` with each token it adds, and `predictTokens` before each decode that
 * may verify a draft; the tokens pushed after a draft say how much of it was accepted.
 */
export class PromptLookupPredictor extends TokenPredictor {
    private readonly lookup: NgramLookup;
    /** By matched suffix length. */
    private lengths = new Map<number, DraftLength>();
    /** The last draft, the suffix length it came from, and the tokens pushed since it was made. */
    private lastDraft: Token[] = [];
    private lastNgram = 0;
    private pushedSinceDraft: Token[] = [];

    constructor(private readonly options: PromptLookupOptions) {
        super();
        this.lookup = new NgramLookup({minNgram: options.minNgram, maxNgram: options.maxNgram});
    }

    override reset({stateTokens}: {stateTokens: Token[]}) {
        this.lookup.reset(stateTokens);
        this.lengths.clear();
        this.lastDraft = [];
        this.pushedSinceDraft = [];
    }

    override pushTokens(tokens: Token[]) {
        this.lookup.push(tokens);
        if (this.lastDraft.length > 0)
            this.pushedSinceDraft.push(...tokens);
    }

    override predictTokens(): Token[] {
        if (this.lastDraft.length > 0) {
            let accepted = 0;
            while (accepted < this.lastDraft.length && this.pushedSinceDraft[accepted] === this.lastDraft[accepted])
                accepted++;
            this.lengthsFor(this.lastNgram).record(this.lastDraft.length, accepted);
            this.lastDraft = [];
            this.pushedSinceDraft = [];
        }
        const match = this.lookup.match();
        if (match == null)
            return [];
        const length = this.lengthsFor(match.n).next();
        if (length === 0)
            return [];
        this.lastDraft = this.lookup.draft(length, match);
        this.lastNgram = match.n;
        return this.lastDraft;
    }

    private lengthsFor(n: number) {
        let lengths = this.lengths.get(n);
        if (lengths == null)
            this.lengths.set(n, lengths = new DraftLength({max: this.options.maxDraft, cost: this.options.cost}));
        return lengths;
    }
}
