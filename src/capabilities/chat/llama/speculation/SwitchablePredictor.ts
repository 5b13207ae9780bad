import { TokenPredictor, type LlamaContextSequence, type SequenceEvaluateOptions, type Token } from "node-llama-cpp";
import type { AdaptiveDraftPredictor } from "./AdaptiveDraftPredictor.js";

/**
 * A sequence's token predictor (node-llama-cpp fixes it when the sequence is made), switched on or off per
 * generation: off, it predicts nothing and its inner predictor is neither reset nor fed, so the sequence
 * decodes one token per step as without one.
 */
export class SwitchablePredictor extends TokenPredictor {
    active = false;
    /** Drafts handed out (non-empty predictions) so far. */
    drafts = 0;
    /** Predictions in a row that were empty, up to the last (a generation's first step counts as one). */
    emptyInARow = 0;

    constructor(readonly inner: AdaptiveDraftPredictor) {
        super();
    }

    override reset(params: {targetSequence: LlamaContextSequence, stateTokens: Token[], evaluateOptions: Readonly<SequenceEvaluateOptions>}) {
        this.emptyInARow = 0;
        return this.active ? this.inner.reset(params) : undefined;
    }

    override pushTokens(tokens: Token[]) {
        if (this.active)
            this.inner.pushTokens(tokens);
    }

    override predictTokens(): Promise<Token[]> | Token[] {
        if (!this.active)
            return [];
        const predicted = this.inner.predictTokens();
        if (predicted instanceof Promise)
            return predicted.then((tokens) => this.counted(tokens));
        return this.counted(predicted);
    }

    private counted(tokens: Token[]) {
        if (tokens.length > 0) {
            this.drafts++;
            this.emptyInARow = 0;
        } else
            this.emptyInARow++;
        return tokens;
    }

    override stop(untilPredictionsExhausted?: boolean) {
        return this.inner.stop(untilPredictionsExhausted);
    }

    override dispose() {
        return this.inner.dispose();
    }
}
