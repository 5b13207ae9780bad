/**
 * Speculative decoding for one chat model, as its settings ask for it (config `--speculative`, `--draft-max` and
 * `--draft-p-min`, manifest `speculative` / `draftModel` / `draftMax` / `draftPMin`; see speculativeOptions). The chat engine is made with it
 * (llama/speculation's SpeculativeOptions add what only the engine knows).
 */
export type SpeculativeSettings = {
    /** `lookup`: drafts copied from the sequence's own text (prompt and output); `draft`: a draft model's guesses; `off`: one token per step. */
    mode: "off" | "lookup" | "draft";
    /** Most tokens a draft may have. */
    draftMax: number;
    /** `draft`: a draft stops before the first token the draft model gives less probability (0: never; llama.cpp's p-min). */
    draftPMin?: number;
    /** `draft`: the draft model's GGUF (a vocabulary the target accepts). */
    draftModelPath?: string;
};
