import type { ManifestSettings } from "../../core/registry/ManifestSettings.js";
import { onnxDtypes } from "../../runtimes/onnx/onnxDtypes.js";

/** Manifest fields of a speech model, with defaults applied (README "Speech"). */
export type SpeechSettings = {
    /**
     * transformers.js dtype of the ONNX file (`fp32` = onnx/model.onnx, `q8` = onnx/model_quantized.onnx, ...), or one of the
     * file-only dtypes Kokoro's export ships (`q8f16` = model_q8f16.onnx, `uint8f16` = model_uint8f16.onnx); null = the first
     * file found (see onnx/speechModelSpec.ts).
     */
    dtype: string | null;
    /** Voice used when a request names none; null = the engine's own default. */
    defaultVoice: string | null;
    /** Extra or overriding aliases: request name (e.g. OpenAI's "alloy") -> the model's own voice name. */
    voices: Readonly<Record<string, string>>;
};

/** Files of the Kokoro-82M ONNX export with no transformers.js dtype: loaded by file name. */
const speechFileDtypes = ["q8f16", "uint8f16"];

type Fields = {dtype?: string, defaultVoice?: string, voices?: Record<string, string>};

export const speechManifest: ManifestSettings<SpeechSettings> = {
    properties: {
        dtype: {enum: [...onnxDtypes, ...speechFileDtypes]},
        defaultVoice: {type: "string", minLength: 1, maxLength: 200},
        voices: {type: "object", additionalProperties: {type: "string", minLength: 1, maxLength: 200}, maxProperties: 1000}
    },
    parse(fields: Fields) {
        return {dtype: fields.dtype ?? null, defaultVoice: fields.defaultVoice ?? null, voices: fields.voices ?? {}};
    }
};
