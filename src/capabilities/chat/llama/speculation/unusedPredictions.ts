import type { LlamaContextSequence } from "node-llama-cpp";

/**
 * Draft tokens verified since `before` (node-llama-cpp's prediction counts of the sequence) that were not
 * used: they may still be loaded in the sequence, after what it reports (dropUnusedPredictions removes them).
 */
export function unusedPredictions(sequence: LlamaContextSequence, before: LlamaContextSequence["tokenPredictions"]): number {
    const after = sequence.tokenPredictions;
    return (after.validated - before.validated) - (after.used - before.used);
}
