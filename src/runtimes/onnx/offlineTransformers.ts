import { env } from "@huggingface/transformers";

/**
 * Sets transformers.js fully offline: models only from the manifest's folders, never the hub, and
 * no file or browser cache of its own. Every ONNX task module's model cache calls it (idempotent).
 */
export function offlineTransformers(): void {
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.useFSCache = false;
    env.useBrowserCache = false;
}
