import { onnxModelFile } from "../../../runtimes/onnx/onnxModelFile.js";
import type { EmbeddingSettings } from "../embeddingsManifest.js";
import type { OnnxModelSpec } from "./workerProtocol.js";

/**
 * What a worker needs to load an ONNX embeddings model folder. Without `dtype` or `onnxFile` the
 * dtype is the first of onnx/model.onnx, model_quantized.onnx, model_fp16.onnx, ... that exists.
 */
export function onnxModelSpec(id: string, folder: string, settings: EmbeddingSettings, threads: number): OnnxModelSpec {
    return {key: `${id}:${folder}`, folder, threads, pooling: settings.pooling, ...onnxModelFile(`Embeddings model '${id}'`, folder, settings)};
}
