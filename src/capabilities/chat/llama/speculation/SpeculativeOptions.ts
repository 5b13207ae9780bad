import type { SpeculativeSettings } from "../../SpeculativeSettings.js";
import type { DraftCost } from "./DraftLength.js";

/** Speculative decoding for one chat model: what its settings ask for (SpeculativeSettings), and how drafts are sized. */
export type SpeculativeOptions = SpeculativeSettings & {
    /**
     * What a draft costs in plain steps of the model, which sizes drafts (AdaptiveDraftPredictor); default: from the
     * model's size (modelDraftCost). All zero: drafts are sized by acceptance alone, on a model of any size (tests).
     */
    cost?: DraftCost;
};
