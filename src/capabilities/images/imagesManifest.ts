import { ManifestFieldError } from "../../core/registry/ManifestFieldError.js";
import type { ManifestSettings } from "../../core/registry/ManifestSettings.js";
import { samplerNames, type SamplerName } from "./samplers/samplerNames.js";

const parameterSets = ["stable-diffusion", "midjourney"] as const;
export type ParameterSet = typeof parameterSets[number];

/** Manifest fields of an image model, with defaults applied (README "Images"). */
export type ImageSettings = {
    /** Which request fields the model speaks. */
    parameterSet: ParameterSet;
    /** The model's own defaults; each replaces the spec's default for this model (the request still wins within bounds). */
    defaults: {steps: number | null, sampler: SamplerName | null, size: string | null, guidanceScale: number | null};
    /** A small preview decoder (e.g. TAESD's vae_decoder/model.onnx), relative to the model folder or absolute; null = a latent-to-RGB projection. */
    previewDecoder: string | null;
};

type Fields = {
    parameterSet?: ParameterSet,
    defaults?: {steps?: number, sampler?: SamplerName, size?: string, guidanceScale?: number},
    previewDecoder?: string
};

export const imagesManifest: ManifestSettings<ImageSettings> = {
    properties: {
        parameterSet: {enum: [...parameterSets]},
        defaults: {
            type: "object",
            additionalProperties: false,
            properties: {
                steps: {type: "integer", minimum: 1, maximum: 50},
                sampler: {enum: [...samplerNames]},
                size: {type: "string", pattern: "^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$"},
                guidanceScale: {type: "number", minimum: 0, maximum: 30}
            }
        },
        previewDecoder: {type: "string", minLength: 1, maxLength: 1000}
    },
    parse(fields: Fields) {
        const size = fields.defaults?.size ?? null;
        if (size != null && size.split("x").some((side) => Number(side) % 8 !== 0))
            throw new ManifestFieldError("defaults.size", `'${size}': each side must be a multiple of 8.`);
        return {
            parameterSet: fields.parameterSet ?? "stable-diffusion",
            defaults: {
                steps: fields.defaults?.steps ?? null,
                sampler: fields.defaults?.sampler ?? null,
                size,
                guidanceScale: fields.defaults?.guidanceScale ?? null
            },
            previewDecoder: fields.previewDecoder ?? null
        };
    }
};
