import path from "node:path";
import { onnxDtypeFiles } from "../../../runtimes/onnx/onnxDtypeFiles.js";
import type { TranscriptionSettings } from "../transcriptionManifest.js";
import type { WhisperModelSpec } from "./transcriptionWorkerProtocol.js";

/** The two files of a Whisper export, each with the dtype's suffix. */
const stems = ["encoder_model", "decoder_model_merged"];
/** The order a folder is searched in when the manifest names no dtype (8-bit first). */
const searchOrder = ["q8", "fp32", "fp16", "int8", "uint8", "q4", "q4f16", "bnb4"];

/** Which files a Whisper folder is loaded from: the manifest's dtype, else the first dtype whose encoder and merged decoder both exist. */
export function whisperModelSpec(id: string, folder: string, settings: TranscriptionSettings, threads: number): WhisperModelSpec {
    const dtype = settings.dtype ?? onnxDtypeFiles.find(folder, stems, searchOrder);
    if (dtype == null)
        throw new Error(`Transcription model '${id}': ${path.join(folder, "onnx")} has no encoder_model.onnx and decoder_model_merged.onnx pair (nor _quantized, _fp16, ... variants).`);
    const suffix = onnxDtypeFiles.suffix(dtype);
    if (!onnxDtypeFiles.exist(folder, stems, dtype))
        throw new Error(`Transcription model '${id}': dtype '${dtype}' needs onnx/encoder_model${suffix}.onnx and onnx/decoder_model_merged${suffix}.onnx in ${folder}.`);
    return {key: `${folder}:${dtype}:${threads}`, folder, dtype, threads};
}
