/**
 * Speculative decoding for one chat model, as its settings ask for it (config `--speculative` and `--draft-max`,
 * manifest `speculative` / `draftModel` / `draftMax`; see speculativeOptions). The chat engine is made with it
 * (llama/speculation's SpeculativeOptions add what only the engine knows).
 */
export type SpeculativeSettings = {
    /** `lookup`: drafts copied from the sequence's own text (prompt and output); `draft`: a draft model's guesses; `off`: one token per step. */
    mode: "off" | "lookup" | "draft";
    /** Most tokens a draft may have. */
    draftMax: number;
    /** `draft`: the draft model's GGUF (a vocabulary the target accepts). */
    draftModelPath?: string;
};
