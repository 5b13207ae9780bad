import type { ManifestSettings } from "../../core/registry/ManifestSettings.js";
import { onnxDtypes } from "../../runtimes/onnx/onnxDtypes.js";

/** Manifest fields of a speech model, with defaults applied (README "Speech"). */
export type SpeechSettings = {
    /** transformers.js dtype of the ONNX file (`fp32` = onnx/model.onnx, `q8` = onnx/model_quantized.onnx, ...); null = whichever file is there. */
    dtype: string | null;
    /** Voice used when a request names none; null = the engine's own default. */
    defaultVoice: string | null;
    /** Extra or overriding aliases: request name (e.g. OpenAI's "alloy") -> the model's own voice name. */
    voices: Readonly<Record<string, string>>;
};

type Fields = {dtype?: string, defaultVoice?: string, voices?: Record<string, string>};

export const speechManifest: ManifestSettings<SpeechSettings> = {
    properties: {
        dtype: {enum: [...onnxDtypes]},
        defaultVoice: {type: "string", minLength: 1, maxLength: 200},
        voices: {type: "object", additionalProperties: {type: "string", minLength: 1, maxLength: 200}, maxProperties: 1000}
    },
    parse(fields: Fields) {
        return {dtype: fields.dtype ?? null, defaultVoice: fields.defaultVoice ?? null, voices: fields.voices ?? {}};
    }
};
