import path from "node:path";
import { onnxDtypeFiles } from "../../../runtimes/onnx/onnxDtypeFiles.js";
import type { SpeechSettings } from "../speechManifest.js";
import type { SpeechModelSpec } from "./speechWorkerProtocol.js";

/**
 * The order a folder is searched in when the manifest names no dtype (8-bit first: Kokoro's q8 file
 * is a quarter of the fp32 one and about as good). q8f16 and uint8f16 are files the Kokoro-82M ONNX
 * export ships that transformers.js has no dtype for: they are loaded by file name (with dtype fp32,
 * which only selects no suffix).
 */
const searchOrder = ["q8", "fp32", "q8f16", "fp16", "int8", "uint8", "uint8f16", "q4", "q4f16", "bnb4"];
const fileOnlyDtypes = new Set(["q8f16", "uint8f16"]);

/**
 * What a worker needs to load a speech model folder. Without a manifest `dtype`, the first of
 * onnx/model_quantized.onnx, model.onnx, model_q8f16.onnx, model_fp16.onnx, ... that exists.
 */
export function speechModelSpec(id: string, folder: string, settings: SpeechSettings, threads: number): SpeechModelSpec {
    const dtype = settings.dtype ?? onnxDtypeFiles.find(folder, ["model"], searchOrder);
    if (dtype == null)
        throw new Error(`Speech model '${id}': ${path.join(folder, "onnx")} has no model.onnx (nor model_quantized.onnx, model_q8f16.onnx, model_fp16.onnx, ...).`);
    if (!onnxDtypeFiles.exist(folder, ["model"], dtype))
        throw new Error(`Speech model '${id}': dtype '${dtype}' needs ${onnxDtypeFiles.files(folder, ["model"], dtype)[0]}, which does not exist.`);
    const fileOnly = fileOnlyDtypes.has(dtype);
    return {
        key: `${folder}:${dtype}:${threads}`, folder, threads,
        dtype: fileOnly ? "fp32" : dtype,
        modelFileName: fileOnly ? `model${onnxDtypeFiles.suffix(dtype)}` : null
    };
}
