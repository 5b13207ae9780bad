/** Speculative decoding for one chat model (config `--speculative`, manifest `speculative` / `draftModel`). */
export type SpeculativeOptions = {
    /** `lookup`: drafts copied from the sequence's own text (prompt and output); `draft`: a draft model's guesses; `off`: one token per step. */
    mode: "off" | "lookup" | "draft";
    /** Most tokens a draft may have. */
    draftMax: number;
    /** `draft`: the draft model's GGUF (a vocabulary the target accepts), and how many tokens the target waits for before verifying. */
    draftModelPath?: string;
    draftMin?: number;
};
