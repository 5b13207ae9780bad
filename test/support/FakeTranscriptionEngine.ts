import type { TranscriptionEngine, TranscriptionJob, TranscriptionOptions, TranscriptionResult } from "../../src/capabilities/transcription/TranscriptionEngine.js";
import type { EngineLoad } from "../../src/core/engines/EngineLoad.js";

/**
 * A transcription engine without a model, for testing the HTTP layer around uploads: it records every
 * job it is given (so a test can prove a request ran nothing) and "hears" the file's size.
 */
export class FakeTranscriptionEngine implements TranscriptionEngine {
    readonly multilingual = true;
    readonly languages = ["en"];
    readonly wordTimestamps = false;
    readonly jobs: TranscriptionJob[] = [];

    constructor(readonly id: string) {}

    load(): EngineLoad {
        return {parallel: 1, busy: 0, waiting: 0};
    }

    async dispose(): Promise<void> {}

    async transcribe(job: TranscriptionJob, _options: TranscriptionOptions): Promise<TranscriptionResult> {
        this.jobs.push(job);
        const text = `heard ${job.file.reduce((sum, part) => sum + part.length, 0)} bytes`;
        return {text, seconds: 1, outputTokens: 3, language: "en", segments: [{
            id: 0, seek: 0, start: 0, end: 1, text, tokens: [1, 2, 3], avgLogprob: 0, compressionRatio: 1, noSpeechProb: 0, temperature: 0
        }]};
    }
}
