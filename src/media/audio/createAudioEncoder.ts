import type { AudioEncoder } from "./AudioEncoder.js";
import { createAacEncoder } from "./createAacEncoder.js";
import { createFlacEncoder } from "./createFlacEncoder.js";
import { createMp3Encoder } from "./createMp3Encoder.js";
import { createOpusEncoder } from "./createOpusEncoder.js";
import { createPcmEncoder } from "./createPcmEncoder.js";
import { createWavEncoder } from "./createWavEncoder.js";
import type { AudioFormat } from "./audioFormats.js";

export type AudioEncoderOptions = {
    /** The rate of the samples that will be pushed (the model's: 24 kHz Kokoro, 16 kHz VITS/MMS). */
    inputSampleRate: number;
    /**
     * Whether the bytes go out while synthesis runs. Only WAV and FLAC differ: streamed, their headers say
     * "length unknown"; not streamed, the encoder holds everything until `end()` and writes the true sizes.
     */
    streaming: boolean;
};

/**
 * An encoder for OpenAI's `response_format`. Async because some codecs load WebAssembly first.
 * Rates: pcm is always 24 kHz (OpenAI's contract); the others keep the model's rate when the format allows it,
 * else resample to that format's nearest standard rate.
 */
export async function createAudioEncoder(format: AudioFormat, options: AudioEncoderOptions): Promise<AudioEncoder> {
    const {inputSampleRate, streaming} = options;
    if (!(Number.isInteger(inputSampleRate) && inputSampleRate > 0))
        throw new RangeError(`inputSampleRate must be a positive integer, got ${inputSampleRate}`);
    switch (format) {
        case "mp3": return createMp3Encoder(inputSampleRate);
        case "opus": return createOpusEncoder(inputSampleRate);
        case "aac": return createAacEncoder(inputSampleRate);
        case "flac": return createFlacEncoder(inputSampleRate, streaming);
        case "wav": return createWavEncoder(inputSampleRate, streaming);
        case "pcm": return createPcmEncoder(inputSampleRate);
    }
}
