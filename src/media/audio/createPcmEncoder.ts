import type { AudioEncoder } from "./AudioEncoder.js";
import { createRateStage } from "./createRateStage.js";
import { toPcm16Bytes } from "./toPcm16Bytes.js";

/** OpenAI's `pcm`: raw signed 16-bit little-endian mono at 24 kHz, whatever the model's rate. */
const pcmSampleRate = 24_000;

export function createPcmEncoder(inputSampleRate: number): AudioEncoder {
    const rate = createRateStage(inputSampleRate, pcmSampleRate);
    return {
        contentType: "audio/pcm",
        sampleRate: pcmSampleRate,
        push: async samples => toPcm16Bytes(rate.push(samples)),
        end: async () => toPcm16Bytes(rate.end())
    };
}
