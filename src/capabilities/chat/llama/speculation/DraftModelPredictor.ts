import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { decodeAheadOption } from "../../../../runtimes/llama/internals.js";
import { AdaptiveDraftPredictor } from "./AdaptiveDraftPredictor.js";
import type { DraftCost, DraftPrior } from "./DraftLength.js";

/**
 * What a draft model's drafts are believed to be worth before the first (q = 32/33): long, as llama-server drafts up to its
 * n-max from the first step. A draft model is chosen for agreeing with its target; the cautious prior's one-token tries
 * took most of a 192-token request to reach full-length drafts (a mean accepted length of 13-15 tokens where llama-server
 * drafted 32: bench:speculative, 2026-11-28). One that does not agree costs one long draft: its first rejection caps the
 * next draft at twice what it accepted, plus two (DraftLength).
 */
const draftModelPrior: DraftPrior = {accepted: 32, rejected: 1};

/**
 * Draft-model speculative decoding: before a step, a sequence of the draft model is brought to the target's
 * text (keeping the prefix it shares with it, as the prompt cache does) and generates the draft greedily, as
 * llama.cpp's server does. Drafting and verifying take turns, so the result never depends on timing.
 *
 * Why not node-llama-cpp's DraftSequenceTokenPredictor: it drafts in the background, and when the target takes
 * every predicted token and one more, it goes on without evaluating its own last prediction, so its next drafts
 * continue a text that is one token short (measured: a model drafting for itself had 20-35% of its drafts
 * accepted, instead of all of them).
 */
export class DraftModelPredictor extends AdaptiveDraftPredictor {
    private state: Token[] = [];

    private readonly pMin: number;

    /**
     * `draftSequence`: the draft model's sequence beside the target's (its prompt cache, saved and restored with the
     * target's); `pMin`: a draft stops before the first token the draft model gives less probability (llama.cpp's
     * `p_min`; 0, its default: never).
     */
    constructor(readonly draftSequence: LlamaContextSequence, options: {maxDraft: number, cost: DraftCost, pMin?: number}) {
        super(options.maxDraft, options.cost);
        this.pMin = options.pMin ?? 0;
    }

    override reset({stateTokens}: {stateTokens: Token[]}) {
        this.state = stateTokens.slice();
        this.restart();
    }

    override pushTokens(tokens: Token[]) {
        this.state.push(...tokens);
        this.observe(tokens);
    }

    override async predictTokens(): Promise<Token[]> {
        const length = this.allowedLength(0);
        if (length === 0 || this.state.length === 0)
            return [];
        // The last token's logits are needed, so it is evaluated again even when the draft sequence holds it.
        await this.draftSequence.adaptStateToTokens(this.state.slice(0, -1), false);
        const draft: Token[] = [];
        // Each drafted token decoded while this loop takes it (the native build), but for the draft's last.
        const options = {temperature: 0, ...decodeAheadOption(this.draftSequence.model, () => draft.length + 1 < length)};
        const tokens = this.state.slice(this.draftSequence.nextTokenIndex);
        // (its probability asked for only with a floor: it costs a softmax per token)
        for await (const item of this.draftSequence.evaluateWithMetadata(tokens, {confidence: this.pMin > 0}, options)) {
            const {confidence} = item as {confidence?: number};
            // The draft model's own probability of its pick, under the floor: the draft ends before it, as llama.cpp's does.
            if (confidence != null && confidence < this.pMin)
                break;
            draft.push(item.token);
            if (draft.length >= length)
                break;
        }
        return this.proposed(draft, 0);
    }

    protected override priorOf(): DraftPrior {
        return draftModelPrior;
    }

    override dispose() {
        this.draftSequence.dispose();
    }
}
