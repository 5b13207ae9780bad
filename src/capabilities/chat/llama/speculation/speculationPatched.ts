import { LlamaContextSequence } from "node-llama-cpp";

/**
 * Whether node-llama-cpp carries the project's fix (patches/node-llama-cpp+3.21.1.patch, applied by
 * patch-package when `npm install`/`npm ci` runs): without it, its speculative evaluation compares each draft
 * token after the first with a list it never fills, so it accepts at most one draft token per step.
 */
export function speculationPatched(): boolean {
    const evaluate = (LlamaContextSequence.prototype as unknown as {_speculativeEvaluate?: () => unknown})._speculativeEvaluate;
    return typeof evaluate === "function" && evaluate.toString().includes("validatedTokens.push(");
}
