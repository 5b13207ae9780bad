import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { AdaptiveDraftPredictor } from "./AdaptiveDraftPredictor.js";
import type { DraftCost } from "./DraftLength.js";

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

    /** `draftSequence`: the draft model's sequence beside the target's (its prompt cache, saved and restored with the target's). */
    constructor(readonly draftSequence: LlamaContextSequence, options: {maxDraft: number, cost: DraftCost}) {
        super(options.maxDraft, options.cost);
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
        for await (const token of this.draftSequence.evaluate(this.state.slice(this.draftSequence.nextTokenIndex), {temperature: 0})) {
            draft.push(token);
            if (draft.length >= length)
                break;
        }
        return this.proposed(draft, 0);
    }

    override dispose() {
        this.draftSequence.dispose();
    }
}
