import type { LlamaContextSequence } from "node-llama-cpp";
import type { SwitchablePredictor } from "./SwitchablePredictor.js";

/** `meanAcceptedLength`: accepted tokens per draft verified. */
export type SpeculationStats = {drafts: number, draftedTokens: number, acceptedTokens: number, acceptanceRate: number | null, meanAcceptedLength: number | null};

/** Draft tokens verified and accepted over a model's choices, from node-llama-cpp's per-sequence prediction counts. */
export class SpeculationCounters {
    private drafts = 0;
    private drafted = 0;
    private accepted = 0;

    /** Call before a choice; the returned function, after it, adds what the choice drafted and accepted. */
    track(sequence: LlamaContextSequence, predictor: SwitchablePredictor): () => void {
        const before = sequence.tokenPredictions;
        const draftsBefore = predictor.drafts;
        return () => {
            const after = sequence.tokenPredictions;
            this.drafts += predictor.drafts - draftsBefore;
            const accepted = after.validated - before.validated;
            this.accepted += accepted;
            this.drafted += accepted + after.refuted - before.refuted;
        };
    }

    stats(): SpeculationStats {
        return {
            drafts: this.drafts, draftedTokens: this.drafted, acceptedTokens: this.accepted,
            acceptanceRate: this.drafted === 0 ? null : this.accepted / this.drafted,
            meanAcceptedLength: this.drafts === 0 ? null : this.accepted / this.drafts
        };
    }
}
