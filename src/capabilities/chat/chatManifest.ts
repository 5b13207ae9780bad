import fs from "node:fs";
import path from "node:path";
import type { ManifestSettings } from "../../core/registry/ManifestSettings.js";
import { ManifestFieldError } from "../../core/registry/ManifestFieldError.js";
import { chatServerSettings } from "./chatServerSettings.js";

export type ChatSettings = {
    /** `auto`: detected from the template and vocabulary; `think-tags` / `gemma4` / `mistral` / `seed` / `hy3` / `apriel` / `harmony` (gpt-oss): split reasoning from answers in that format; `none`: never. */
    reasoning: "auto" | "think-tags" | "gemma4" | "mistral" | "seed" | "hy3" | "apriel" | "harmony" | "none";
    /** Speculative decoding for this model; null = the server's `--speculative` (docs/speculative.md). */
    speculative: "off" | "lookup" | "draft" | null;
    /** A small GGUF with the same vocabulary that drafts for this model (absolute path). */
    draftModel: string | null;
    /** Most tokens per draft; null = `--draft-max`. */
    draftMax: number | null;
    /** A draft model's drafts stop before a token it gives less probability; null = `--draft-p-min`. */
    draftPMin: number | null;
    /** Whether the model answers /v1/decisions and /v1/systemone (docs/decisions.md); every chat model does unless this is false. */
    decisions: boolean;
};

/** The manifest fields only chat models have. */
export const chatManifest: ManifestSettings<ChatSettings> = {
    properties: {
        reasoning: {enum: ["auto", "think-tags", "gemma4", "mistral", "seed", "hy3", "apriel", "harmony", "none"]},
        speculative: {enum: ["off", "lookup", "draft"]},
        draftModel: {type: "string", minLength: 1},
        draftMax: {type: "integer", minimum: chatServerSettings.draftMax.min, maximum: chatServerSettings.draftMax.max},
        draftPMin: {type: "number", minimum: chatServerSettings.draftPMin.min, maximum: chatServerSettings.draftPMin.max},
        decisions: {type: "boolean"}
    },
    parse(fields, entry) {
        const draftModel = fields.draftModel == null ? null : path.resolve(entry.folder, fields.draftModel as string);
        if (draftModel != null && !fs.existsSync(draftModel))
            throw new ManifestFieldError("draftModel", `points to ${draftModel}, which does not exist.`);
        const speculative = (fields.speculative as ChatSettings["speculative"] | undefined) ?? (draftModel != null ? "draft" : null);
        if (speculative === "draft" && draftModel == null)
            throw new ManifestFieldError("speculative", `is "draft" but the entry names no 'draftModel'.`);
        return {
            reasoning: (fields.reasoning as ChatSettings["reasoning"] | undefined) ?? "auto",
            speculative,
            draftModel,
            draftMax: (fields.draftMax as number | undefined) ?? null,
            draftPMin: (fields.draftPMin as number | undefined) ?? null,
            decisions: (fields.decisions as boolean | undefined) ?? true
        };
    }
};
