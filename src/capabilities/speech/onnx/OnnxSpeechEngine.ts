// Placeholder: the speech-engine branch replaces this file with the engine (Kokoro and VITS in the worker pool).
import type { ModelEntry } from "../../../core/registry/ModelEntry.js";
import type { WorkerPool } from "../../../core/workers/WorkerPool.js";
import type { SpeechEngine } from "../SpeechEngine.js";
import type { SpeechSettings } from "../speechManifest.js";

export type OnnxSpeechEngineOptions = {threads: number, parallel: number, queueSize: number, onWarning?(message: string): void};

export const OnnxSpeechEngine = {
    async load(_pool: WorkerPool, entry: ModelEntry<SpeechSettings>, _options: OnnxSpeechEngineOptions): Promise<SpeechEngine> {
        throw new Error(`Model '${entry.id}': the ONNX speech engine is not built yet.`);
    }
};
