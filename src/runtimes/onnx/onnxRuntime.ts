import { createRequire } from "node:module";
import type * as Ort from "onnxruntime-node";

export type OnnxRuntime = typeof Ort;

let runtime: OnnxRuntime | null = null;

/**
 * The ONNX Runtime module transformers.js itself loaded (its `onnxruntime-node` dependency, resolved from
 * transformers.js's own folder), for models that transformers.js has no class for (a diffusion UNet, a VAE
 * decoder): same native library, same threads, never a second copy of ONNX Runtime. transformers.js does not
 * export its `InferenceSession`; resolving the dependency from its package makes sure this is the very module
 * (Node caches modules by resolved path) even if another onnxruntime-node were installed elsewhere.
 */
export function onnxRuntime(): OnnxRuntime {
    if (runtime == null) {
        const require = createRequire(import.meta.url);
        const fromTransformers = createRequire(require.resolve("@huggingface/transformers"));
        runtime = fromTransformers("onnxruntime-node") as OnnxRuntime;
    }
    return runtime;
}
