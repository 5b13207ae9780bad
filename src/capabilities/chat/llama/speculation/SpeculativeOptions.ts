import type { SpeculativeSettings } from "../../SpeculativeSettings.js";
import type { DraftCost } from "./DraftLength.js";

/** Speculative decoding for one chat model: what its settings ask for (SpeculativeSettings), and how drafts are sized. */
export type SpeculativeOptions = SpeculativeSettings & {
    /**
     * What a draft costs in plain steps of the model, which sizes drafts (AdaptiveDraftPredictor); default: from the
     * model's size (modelDraftCost). All zero: drafts are sized by acceptance alone, on a model of any size (tests).
     */
    cost?: DraftCost;
    /**
     * How drafts are verified: `native` (default) samples a whole draft in one native call where the binary can
     * (internals.ts `draftVerificationOf`), `per-position` one native call per position even there (tests compare them;
     * it also samples a plain step in a call of its own, after the decode, instead of in the decode call).
     */
    verification?: DraftVerification;
};

/** How a draft's positions are sampled: all in one native call, or one native call each (the prebuilt binaries). */
export type DraftVerification = "native" | "per-position";
