/**
 * The engines of a spawned test server (test/support/gatedServerMain.ts with GATED_FAKE_ENGINES=1) for chat,
 * speech, images and transcription: scripted fakes that produce their first piece at once (a token, a sentence,
 * an image step, a window's segments), then wait for the gate (SIGUSR2, see gateCapability.ts) or their request's
 * abort. A stream is then open for sure and cannot end by itself, without any timer: what a shutdown does to it
 * is what the test sees.
 */
import type { Capability } from "../../src/capabilities/Capability.js";
import type { TranscriptionEngine, TranscriptionJob, TranscriptionOptions, TranscriptionResult, TranscriptSegment } from "../../src/capabilities/transcription/TranscriptionEngine.js";
import type { Engine } from "../../src/core/engines/Engine.js";
import { AdmissionQueue } from "../../src/core/admission/AdmissionQueue.js";
import { gateOpened } from "./capabilities/gateCapability.js";
import { FakeChatEngine } from "./FakeChatEngine.js";
import { FakeImageEngine } from "./FakeImageEngine.js";
import { FakeSpeechEngine } from "./FakeSpeechEngine.js";

/** Streams that may be open at once per model. */
const parallel = 4;

/** The first piece goes at once; every later one waits for the gate (or the abort). */
const afterFirst = (index: number, signal: AbortSignal) => index === 0 ? Promise.resolve() : gateOpened(signal);

/** The text of the gated transcription's segments, in order. */
export const gatedTranscript = ["Hello there.", "General Kenobi."];

class GatedTranscriptionEngine implements TranscriptionEngine {
    readonly multilingual = false;
    readonly languages = ["en"];
    readonly wordTimestamps = false;
    private readonly admission: AdmissionQueue;

    constructor(readonly id: string) {
        this.admission = new AdmissionQueue(parallel, parallel, id);
    }

    load() {
        return this.admission.load();
    }

    transcribe(_job: TranscriptionJob, {signal, onSegments}: TranscriptionOptions): Promise<TranscriptionResult> {
        return this.admission.run(1, signal, async () => {
            const segments = gatedTranscript.map((text, index): TranscriptSegment => ({
                id: index, seek: index * 3000, start: index * 30, end: index * 30 + 2, text: ` ${text}`, tokens: [index + 1],
                avgLogprob: -0.1, compressionRatio: 1, noSpeechProb: 0, temperature: 0
            }));
            for (const [index, segment] of segments.entries()) {
                await afterFirst(index, signal);
                signal.throwIfAborted();
                onSegments?.([segment], 30 * (index + 1), 60);
            }
            return {segments, text: segments.map((segment) => segment.text).join(""), seconds: 60, outputTokens: segments.length, language: "en"};
        });
    }

    async dispose() {
        this.admission.close(new Error("disposed"));
        await this.admission.drain();
    }
}

const gatedTasks = new Set(["chat", "speech", "image", "transcription"]);

function gatedEngine(task: string, id: string): Engine {
    if (task === "chat")
        return new FakeChatEngine(id, {pieces: ["Hel", "lo"], beforePiece: afterFirst});
    if (task === "speech")
        return new FakeSpeechEngine(id, {sampleRate: 24000, hasSpeedInput: true, parallel, queueSize: parallel, beforeSentence: afterFirst});
    if (task === "image") {
        const engine = new FakeImageEngine(id, {parallel, queueSize: parallel});
        // Every generation waits after its first step; each opening of the gate lets those waiting go on.
        const hold = () => {
            const release = engine.hold();
            void gateOpened(new AbortController().signal).then(() => {
                release();
                hold();
            });
        };
        hold();
        return engine;
    }
    return new GatedTranscriptionEngine(id);
}

/** `capability` serving gated fakes instead of its models, where gatedEngine has one for its task. */
export function withGatedFakeEngine(capability: Capability): Capability {
    return gatedTasks.has(capability.task) ? {...capability, createEngine: async (entry) => gatedEngine(capability.task, entry.id)} : capability;
}
