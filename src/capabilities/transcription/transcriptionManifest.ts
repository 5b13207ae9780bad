import type { ManifestSettings } from "../../core/registry/ManifestSettings.js";
import { onnxDtypes } from "../../runtimes/onnx/onnxDtypes.js";

/** Manifest fields of a transcription model, with defaults applied (docs/transcription.md). */
export type TranscriptionSettings = {
    /** transformers.js dtype of both ONNX files (`fp32` = onnx/encoder_model.onnx + decoder_model_merged.onnx, `q8` = *_quantized.onnx, ...); null = the first pair found. */
    dtype: string | null;
    /** Whisper's temperature fallback for requests at temperature 0 (default true; false = one greedy decode per window, as whisper.cpp's --no-fallback). */
    temperatureFallback: boolean;
    /** Each window prompted with the text before it, as OpenAI's Whisper (default true; false = only the request's prompt). */
    conditionOnPreviousText: boolean;
};

export const transcriptionManifest: ManifestSettings<TranscriptionSettings> = {
    properties: {dtype: {enum: [...onnxDtypes]}, temperatureFallback: {type: "boolean"}, conditionOnPreviousText: {type: "boolean"}},
    parse(fields: {dtype?: string, temperatureFallback?: boolean, conditionOnPreviousText?: boolean}) {
        return {dtype: fields.dtype ?? null, temperatureFallback: fields.temperatureFallback ?? true, conditionOnPreviousText: fields.conditionOnPreviousText ?? true};
    }
};
