import type { AudioEncoder } from "../../media/audio/AudioEncoder.js";
import { timeStretch } from "../../media/audio/timeStretch.js";
import { AsyncQueue } from "../../core/streaming/AsyncQueue.js";
import type { SpeechEngine } from "./SpeechEngine.js";
import type { SpeechResponsePlan } from "./toSpeechJob.js";

/** Longest piece of audio encoded in one go on the main thread (MP3 at 24 kHz: a few ms of CPU). */
const encodeSliceSeconds = 0.25;

export type EncodedSpeech = {
    /**
     * The encoder's bytes, one item per slice of a sentence (possibly empty: a codec holding back a
     * frame), then the encoder's final bytes, then null. The first item means the first sentence is done.
     * Rejects with the engine's or the encoder's error, or the abort reason.
     */
    chunks: AsyncQueue<Uint8Array>;
    /** Resolves after the last chunk was queued: tokens fed to the model and samples returned (after any stretch). */
    done: Promise<{inputTokens: number, audioSamples: number}>;
    /**
     * Stops synthesis (if running) and waits until the encoder is released; call it however the response ended (and not
     * wait for it when the request was aborted: the engine may still be finishing a sentence).
     */
    release(): Promise<void>;
};

/**
 * Runs one speech job and encodes it sentence by sentence: each sentence the engine hands over is
 * time-stretched when the model has no speed input, pushed through the encoder, and its bytes
 * queued at once, so they can leave before the next sentence exists. An encoder failure stops
 * the engine; the encoder's `end()` is called exactly once in every case, freeing its codec.
 */
export function synthesizeEncoded(engine: SpeechEngine, plan: SpeechResponsePlan, encoder: AudioEncoder, signal: AbortSignal): EncodedSpeech {
    const chunks = new AsyncQueue<Uint8Array>();
    const stop = new AbortController();
    let audioSamples = 0;
    let encoding: Promise<void> = Promise.resolve();
    let encoderEnded = false;
    let encoderFailure: {error: unknown} | null = null;
    const endEncoder = async () => {
        if (encoderEnded)
            return new Uint8Array(0);
        encoderEnded = true;
        return encoder.end();
    };

    // Encoding runs on the main thread (lamejs is plain JavaScript): each sentence is pushed in slices of at most
    // `encodeSliceSeconds`, each on its own event-loop turn, so sockets, other requests' tokens and worker messages get
    // through between slices instead of waiting for a whole sentence (or a burst of queued ones) to be encoded. The
    // encoders' output does not depend on how the input is split.
    const sliceSamples = Math.max(1, Math.round(encodeSliceSeconds * engine.sampleRate));
    const encodeSentence = async (samples: Float32Array) => {
        const audio = plan.stretch === 1 ? samples : timeStretch(samples, engine.sampleRate, plan.stretch);
        audioSamples += audio.length;
        for (let start = 0; start === 0 || start < audio.length; start += sliceSamples) {
            await new Promise((resolve) => setImmediate(resolve));
            chunks.push(await encoder.push(audio.subarray(start, start + sliceSamples)));
        }
    };

    /** The engine's outcome once the sentences it handed over are encoded (so a failure at sentence n follows the bytes of 1..n-1). */
    const settleAfterEncoding = async <T>(run: Promise<T>): Promise<T> => {
        try {
            return await run;
        } catch (error) {
            await encoding.catch(() => {});
            throw error;
        }
    };

    const synthesis = (async () => {
        const result = await settleAfterEncoding(engine.synthesize(plan.job, {
            signal: AbortSignal.any([signal, stop.signal]),
            onAudio(samples) {
                encoding = encoding.then(() => encodeSentence(samples));
                // A failed push stops the engine; the error itself surfaces from `encoding` below.
                encoding.catch((error) => {
                    encoderFailure ??= {error};
                    stop.abort(error);
                });
            }
        }));
        await encoding;
        chunks.push(await endEncoder());
        return {inputTokens: result.inputTokens, audioSamples};
    })();
    // The request's end (its client gone, the shutdown's grace over) reaches the writer at once: the engine stops only
    // at its next sentence (a worker cannot be interrupted mid-sentence), and the answer (a 503 at shutdown) must not
    // wait for it.
    const aborted = () => chunks.fail(signal.reason);
    if (signal.aborted)
        aborted();
    else
        signal.addEventListener("abort", aborted, {once: true});
    const done = synthesis.then((result) => {
        signal.removeEventListener("abort", aborted);
        chunks.end();
        return result;
    }, (error) => {
        signal.removeEventListener("abort", aborted);
        // An encoder failure aborts the engine with that error: report it, not the abort.
        const reason = encoderFailure != null ? encoderFailure.error : error;
        chunks.fail(reason);
        throw reason;
    });
    done.catch(() => {});

    return {
        chunks,
        done,
        async release() {
            if (!encoderEnded)
                stop.abort(new Error("The response ended before the audio was complete."));
            await done.catch(() => {});
            await encoding.catch(() => {});
            // Abandoned: the bytes are discarded, the codec freed.
            await endEncoder().catch(() => {});
        }
    };
}
