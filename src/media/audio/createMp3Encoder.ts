import { Mp3Encoder } from "@breezystack/lamejs";
import type { AudioEncoder } from "./AudioEncoder.js";
import { createRateStage } from "./createRateStage.js";
import { toInt16 } from "./toInt16.js";

/** Rates an MP3 frame can declare (MPEG-1, MPEG-2 and MPEG-2.5); 16 and 24 kHz, the speech models' rates, are MPEG-2. */
const mp3Rates = [8000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000];
/** Constant bitrate for mono speech; 64 kbit/s is transparent enough for 16–24 kHz voice and valid for every MPEG version. */
const bitrateKbps = 64;

/**
 * MP3 through lamejs (a JavaScript port of LAME): CBR frames without a Xing/Info tag, so a stream cut anywhere
 * is still a valid sequence of frames. Frames go out as soon as LAME emits them.
 */
export function createMp3Encoder(inputSampleRate: number): AudioEncoder {
    const sampleRate = mp3Rates.includes(inputSampleRate) ? inputSampleRate : 24_000;
    const rate = createRateStage(inputSampleRate, sampleRate);
    const lame = new Mp3Encoder(1, sampleRate, bitrateKbps);
    const encode = (samples: Float32Array) => samples.length === 0 ? new Uint8Array(0) : Uint8Array.from(lame.encodeBuffer(toInt16(samples)));
    return {
        contentType: "audio/mpeg",
        sampleRate,
        push: async samples => encode(rate.push(samples)),
        async end() {
            const last = encode(rate.end());
            const flushed = lame.flush();
            const out = new Uint8Array(last.length + flushed.length);
            out.set(last);
            out.set(flushed, last.length);
            return out;
        }
    };
}
