import fs from "node:fs";
import path from "node:path";
import { onnxDtypeFiles } from "./onnxDtypeFiles.js";

/** The order a folder is searched in when the manifest names neither `dtype` nor `onnxFile` (full precision first). */
const searchOrder = ["fp32", "q8", "fp16", "int8", "uint8", "q4", "q4f16", "bnb4"];

/** Which file of a transformers.js folder's `onnx/` a model runs: its dtype, and its base name when it is not `model`. */
export type OnnxModelFile = {dtype: string, modelFileName: string | null};

/**
 * The ONNX file of a one-file transformers.js model folder (an encoder: embeddings, a cross-encoder) from the manifest's
 * `onnxFile` or `dtype`; with neither, the first of onnx/model.onnx, model_quantized.onnx, model_fp16.onnx, ... that
 * exists. `what` names the model in errors (e.g. `Embeddings model 'x'`).
 */
export function onnxModelFile(what: string, folder: string, settings: {dtype: string | null, onnxFile: string | null}): OnnxModelFile {
    if (settings.onnxFile != null) {
        requireFile(path.join(folder, "onnx", settings.onnxFile), what);
        return {dtype: "fp32", modelFileName: settings.onnxFile.replace(/\.onnx$/, "")};
    }
    if (settings.dtype != null) {
        requireFile(onnxDtypeFiles.files(folder, ["model"], settings.dtype)[0], what);
        return {dtype: settings.dtype, modelFileName: null};
    }
    const found = onnxDtypeFiles.find(folder, ["model"], searchOrder);
    if (found == null)
        throw new Error(`${what}: ${path.join(folder, "onnx")} has no model.onnx (nor model_quantized.onnx, model_fp16.onnx, ...); set 'onnxFile' in the manifest.`);
    return {dtype: found, modelFileName: null};
}

function requireFile(file: string, what: string) {
    if (!fs.existsSync(file))
        throw new Error(`${what}: ${file} does not exist.`);
}
