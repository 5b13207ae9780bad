import fs from "node:fs";
import path from "node:path";
import type { SpeechSettings } from "../speechManifest.js";
import type { SpeechModelSpec } from "./speechWorkerProtocol.js";

/**
 * File name suffix in onnx/ of each dtype, in the order a folder is searched when the manifest names
 * none. The first eight are transformers.js 4's own table (src/utils/dtypes.js
 * DEFAULT_DTYPE_SUFFIX_MAPPING); q8f16 and uint8f16 are files the Kokoro-82M ONNX export ships that
 * transformers.js has no dtype for: they are loaded by file name (with dtype fp32, which only
 * selects no suffix).
 */
const suffixByDtype: [string, string][] = [
    ["q8", "_quantized"], ["fp32", ""], ["q8f16", "_q8f16"], ["fp16", "_fp16"], ["int8", "_int8"], ["uint8", "_uint8"],
    ["uint8f16", "_uint8f16"], ["q4", "_q4"], ["q4f16", "_q4f16"], ["bnb4", "_bnb4"]
];
const fileOnlyDtypes = new Set(["q8f16", "uint8f16"]);

/**
 * What a worker needs to load a speech model folder. Without a manifest `dtype`, the first of
 * onnx/model_quantized.onnx, model.onnx, model_q8f16.onnx, model_fp16.onnx, ... that exists
 * (8-bit first: Kokoro's q8 file is a quarter of the fp32 one and about as good).
 */
export function speechModelSpec(id: string, folder: string, settings: SpeechSettings, threads: number): SpeechModelSpec {
    const onnxFolder = path.join(folder, "onnx");
    let dtype = settings.dtype;
    if (dtype == null) {
        const found = suffixByDtype.find(([, suffix]) => fs.existsSync(path.join(onnxFolder, `model${suffix}.onnx`)));
        if (found == null)
            throw new Error(`Speech model '${id}': ${onnxFolder} has no model.onnx (nor model_quantized.onnx, model_q8f16.onnx, model_fp16.onnx, ...).`);
        dtype = found[0];
    }
    const suffix = suffixByDtype.find(([name]) => name === dtype)?.[1] ?? "";
    const file = path.join(onnxFolder, `model${suffix}.onnx`);
    if (!fs.existsSync(file))
        throw new Error(`Speech model '${id}': dtype '${dtype}' needs ${file}, which does not exist.`);
    const fileOnly = fileOnlyDtypes.has(dtype);
    return {
        key: `${folder}:${dtype}:${threads}`, folder, threads,
        dtype: fileOnly ? "fp32" : dtype,
        modelFileName: fileOnly ? `model${suffix}` : null
    };
}
