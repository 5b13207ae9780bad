import type { ManifestSettings } from "../../core/registry/ManifestSettings.js";
import { onnxDtypes } from "../../runtimes/onnx/onnxDtypes.js";

/** Manifest fields of a transcription model, with defaults applied (docs/transcription.md). */
export type TranscriptionSettings = {
    /** transformers.js dtype of both ONNX files (`fp32` = onnx/encoder_model.onnx + decoder_model_merged.onnx, `q8` = *_quantized.onnx, ...); null = the first pair found. */
    dtype: string | null;
};

export const transcriptionManifest: ManifestSettings<TranscriptionSettings> = {
    properties: {dtype: {enum: [...onnxDtypes]}},
    parse(fields: {dtype?: string}) {
        return {dtype: fields.dtype ?? null};
    }
};
