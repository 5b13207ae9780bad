import { registerAacEncoder } from "@mediabunny/aac-encoder";
import { AdtsOutputFormat, AppendOnlyStreamTarget, AudioSample, AudioSampleSource, Output } from "mediabunny";
import type { AudioEncoder } from "./AudioEncoder.js";
import { concatBytes } from "./concatBytes.js";
import { createRateStage } from "./createRateStage.js";

/** Sampling frequencies an ADTS header can index. */
const aacRates = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8000, 7350];
const bitrate = 64_000;

let registered = false;

/**
 * AAC-LC in ADTS through Mediabunny's ADTS muxer and its AAC encoder extension (FFmpeg's native AAC encoder built to
 * WebAssembly, running in a worker thread of this process). Every 1024-sample frame is muxed as soon as the worker
 * returns it. A push waits until the worker has encoded every whole frame pushed so far and returns those frames
 * (all but the encoder's own delay), so a sentence's audio can leave before the next sentence exists; `end()` the rest.
 * `end()` must be called even for an abandoned response: it is what stops the worker.
 */
export async function createAacEncoder(inputSampleRate: number): Promise<AudioEncoder> {
    if (!registered) {
        registerAacEncoder();
        registered = true;
    }
    const sampleRate = aacRates.includes(inputSampleRate) ? inputSampleRate : 24_000;
    const rate = createRateStage(inputSampleRate, sampleRate);
    let written: Uint8Array[] = [];
    const output = new Output({
        format: new AdtsOutputFormat(),
        target: new AppendOnlyStreamTarget(new WritableStream({write: chunk => void written.push(chunk.slice())}))
    });
    const source = new AudioSampleSource({codec: "aac", bitrate});
    output.addAudioTrack(source);
    await output.start();
    let samplesAdded = 0;

    const add = async (samples: Float32Array) => {
        if (samples.length === 0) return;
        // Timestamps from the running sample count, so sample-exact however the input is split.
        const sample = new AudioSample({data: samples, format: "f32", numberOfChannels: 1, sampleRate, timestamp: samplesAdded / sampleRate});
        samplesAdded += samples.length;
        try {
            await source.add(sample);
        } finally {
            sample.close();
        }
    };
    const take = async () => {
        await caughtUp(source);
        const bytes = concatBytes(written);
        written = [];
        return bytes;
    };
    return {
        contentType: "audio/aac",
        sampleRate,
        async push(samples) {
            await add(rate.push(samples));
            return await take();
        },
        async end() {
            try {
                await add(rate.end());
                await output.finalize();
            } catch (error) {
                await output.cancel();
                throw error;
            }
            return await take();
        }
    };
}

/** Mediabunny's private encoder state (pinned version): its serialized calls into the custom encoder, and the muxer's last write. */
type EncoderInternals = {_encoder?: {customEncoderCallSerializer?: {currentPromise: Promise<unknown>}, lastMuxerPromise?: Promise<unknown>}};

/**
 * Waits until every sample added so far has been through the AAC worker and muxed. Mediabunny's `add` only waits when
 * four encode calls are queued, so without this a push returns before its frames exist. The internals are read
 * defensively: if a later Mediabunny renames them, this waits for nothing and frames simply come out one push later.
 */
async function caughtUp(source: AudioSampleSource) {
    const internals = (source as unknown as EncoderInternals)._encoder;
    await internals?.customEncoderCallSerializer?.currentPromise.catch(() => {});
    await internals?.lastMuxerPromise?.catch(() => {});
}
