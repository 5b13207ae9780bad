import type { SpeechModelDescription } from "./speechWorkerProtocol.js";

/** A speech model loaded in a worker: what `speechTasks` needs of Kokoro and VITS alike. */
export interface LoadedSpeechModel {
    readonly description: SpeechModelDescription;
    /**
     * Each sentence's token ids, as one or more sequences that each fit the model (a sentence whose
     * phonemes exceed Kokoro's 510 tokens is cut at a word boundary); none when nothing is speakable.
     * Several sentences at once cost less than one by one (one espeak call).
     */
    tokenize(sentences: readonly string[], voice: string): Promise<number[][][]>;
    /** Tokens of a sequence that count as input (padding and blanks excluded). */
    countTokens(ids: number[]): number;
    /** One forward pass: mono float32 samples at `description.sampleRate`, in a buffer of their own. */
    generate(ids: number[], voice: string, speed: number): Promise<Float32Array>;
    /** Frees its ONNX Runtime session. */
    dispose(): Promise<void>;
}
