import type { DraftCost } from "./DraftLength.js";

/** Speculative decoding for one chat model (config `--speculative`, manifest `speculative` / `draftModel`). */
export type SpeculativeOptions = {
    /** `lookup`: drafts copied from the sequence's own text (prompt and output); `draft`: a draft model's guesses; `off`: one token per step. */
    mode: "off" | "lookup" | "draft";
    /** Most tokens a draft may have. */
    draftMax: number;
    /** `draft`: the draft model's GGUF (a vocabulary the target accepts). */
    draftModelPath?: string;
    /**
     * What a draft costs in plain steps of the model, which sizes drafts (AdaptiveDraftPredictor); default: from the
     * model's size (modelDraftCost). All zero: drafts are sized by acceptance alone, on a model of any size (tests).
     */
    cost?: DraftCost;
};
