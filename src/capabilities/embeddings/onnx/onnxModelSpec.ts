import fs from "node:fs";
import path from "node:path";
import type { EmbeddingSettings } from "../embeddingsManifest.js";
import type { OnnxModelSpec } from "./workerProtocol.js";

/** File name suffix in onnx/ of each transformers.js dtype, in the order a folder is searched when the manifest names none. */
const suffixByDtype: [string, string][] = [
    ["fp32", ""], ["q8", "_quantized"], ["fp16", "_fp16"], ["int8", "_int8"], ["uint8", "_uint8"],
    ["q4", "_q4"], ["q4f16", "_q4f16"], ["bnb4", "_bnb4"]
];

/**
 * What a worker needs to load an ONNX embeddings model folder. Without `dtype` or `onnxFile` the
 * dtype is the first of onnx/model.onnx, model_quantized.onnx, model_fp16.onnx, ... that exists.
 */
export function onnxModelSpec(id: string, folder: string, settings: EmbeddingSettings, threads: number): OnnxModelSpec {
    const base = {key: `${id}:${folder}`, folder, threads, pooling: settings.pooling};
    const onnxFolder = path.join(folder, "onnx");
    if (settings.onnxFile != null) {
        requireFile(path.join(onnxFolder, settings.onnxFile), id);
        return {...base, dtype: "fp32", modelFileName: settings.onnxFile.replace(/\.onnx$/, "")};
    }
    if (settings.dtype != null) {
        const suffix = suffixByDtype.find(([dtype]) => dtype === settings.dtype)?.[1] ?? "";
        requireFile(path.join(onnxFolder, `model${suffix}.onnx`), id);
        return {...base, dtype: settings.dtype, modelFileName: null};
    }
    const found = suffixByDtype.find(([, suffix]) => fs.existsSync(path.join(onnxFolder, `model${suffix}.onnx`)));
    if (found == null)
        throw new Error(`Embeddings model '${id}': ${onnxFolder} has no model.onnx (nor model_quantized.onnx, model_fp16.onnx, ...); set 'onnxFile' in the manifest.`);
    return {...base, dtype: found[0], modelFileName: null};
}

function requireFile(file: string, id: string) {
    if (!fs.existsSync(file))
        throw new Error(`Embeddings model '${id}': ${file} does not exist.`);
}
