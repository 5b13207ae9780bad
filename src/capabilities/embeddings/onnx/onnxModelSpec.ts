import fs from "node:fs";
import path from "node:path";
import { onnxDtypeFiles } from "../../../runtimes/onnx/onnxDtypeFiles.js";
import type { EmbeddingSettings } from "../embeddingsManifest.js";
import type { OnnxModelSpec } from "./workerProtocol.js";

/** The order a folder is searched in when the manifest names neither `dtype` nor `onnxFile` (full precision first). */
const searchOrder = ["fp32", "q8", "fp16", "int8", "uint8", "q4", "q4f16", "bnb4"];

/**
 * What a worker needs to load an ONNX embeddings model folder. Without `dtype` or `onnxFile` the
 * dtype is the first of onnx/model.onnx, model_quantized.onnx, model_fp16.onnx, ... that exists.
 */
export function onnxModelSpec(id: string, folder: string, settings: EmbeddingSettings, threads: number): OnnxModelSpec {
    const base = {key: `${id}:${folder}`, folder, threads, pooling: settings.pooling};
    if (settings.onnxFile != null) {
        requireFile(path.join(folder, "onnx", settings.onnxFile), id);
        return {...base, dtype: "fp32", modelFileName: settings.onnxFile.replace(/\.onnx$/, "")};
    }
    if (settings.dtype != null) {
        requireFile(onnxDtypeFiles.files(folder, ["model"], settings.dtype)[0], id);
        return {...base, dtype: settings.dtype, modelFileName: null};
    }
    const found = onnxDtypeFiles.find(folder, ["model"], searchOrder);
    if (found == null)
        throw new Error(`Embeddings model '${id}': ${path.join(folder, "onnx")} has no model.onnx (nor model_quantized.onnx, model_fp16.onnx, ...); set 'onnxFile' in the manifest.`);
    return {...base, dtype: found, modelFileName: null};
}

function requireFile(file: string, id: string) {
    if (!fs.existsSync(file))
        throw new Error(`Embeddings model '${id}': ${file} does not exist.`);
}
