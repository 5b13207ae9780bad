import type { DraftCost } from "./DraftLength.js";
import type { DraftVerification } from "./SpeculativeOptions.js";

/**
 * What verifying a draft costs beside a plain step, in milliseconds of node-llama-cpp's own work, measured on this
 * project's 2-core machine (bench:speculative): once per verification, and per draft token (a batch row and its
 * sampling: a native call of its own per position, or a share of the one native call that samples the whole draft).
 */
const verificationCost: Record<DraftVerification, {fixedMs: number, perTokenMs: number}> = {
    "per-position": {fixedMs: 0.1, perTokenMs: 0.8},
    native: {fixedMs: 0.1, perTokenMs: 0.1}
};
/** The share of a step a draft token adds to the batch of a model whose step is mostly reading its weights. */
const perTokenStepShare = 0.1;
/**
 * A plain decoding step on the CPU, one thread, as the model's size predicts it: the fixed work of node-llama-cpp and
 * llama.cpp per step, and reading every weight once. Measured on the project's 2-core machine: stories260K (1 MB)
 * 0.6 ms a step, the 58 MB F16 models of bench:speculative 4-7 ms, its 113 MB one 14 ms.
 */
const stepFixedMs = 0.5;
const weightBytesPerMs = 10_000_000;

/** The estimated time of a plain decoding step of a model whose tensors take `weightBytes`. */
export function estimatedStepMs(weightBytes: number): number {
    return stepFixedMs + weightBytes / weightBytesPerMs;
}

/**
 * What a draft costs in plain steps of the model (DraftLength): fixed when the model loads, from its size, never from
 * measured step times, so a request drafts exactly the same on a busy machine as on an idle one (with a sampled
 * request, what is drafted decides how many random numbers are drawn, so it decides the output). `extraPerToken`: a
 * draft model's own step per draft token, in steps of the target; `verification`: how the binary samples a draft.
 */
export function modelDraftCost(weightBytes: number, extraPerToken = 0, verification: DraftVerification = "per-position"): DraftCost {
    const stepMs = estimatedStepMs(weightBytes);
    const {fixedMs, perTokenMs} = verificationCost[verification];
    return {fixed: fixedMs / stepMs, perToken: perTokenMs / stepMs + perTokenStepShare + extraPerToken};
}
