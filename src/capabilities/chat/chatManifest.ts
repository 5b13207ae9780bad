import type { ManifestSettings } from "../../core/registry/ManifestSettings.js";

export type ChatSettings = {
    /** `auto`: detected from the template and vocabulary; `think-tags` / `harmony` (gpt-oss): split reasoning from answers in that format; `none`: never. */
    reasoning: "auto" | "think-tags" | "harmony" | "none";
};

/** The manifest fields only chat models have. */
export const chatManifest: ManifestSettings<ChatSettings> = {
    properties: {reasoning: {enum: ["auto", "think-tags", "harmony", "none"]}},
    parse: (fields) => ({reasoning: (fields.reasoning as ChatSettings["reasoning"] | undefined) ?? "auto"})
};
