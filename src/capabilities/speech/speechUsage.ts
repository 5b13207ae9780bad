import type { SpeechUsage } from "./SpeechWire.js";

/** Output tokens per second of returned audio: one per 20 ms, the frame length of Opus and of common speech codecs. */
const outputTokensPerSecond = 50;

/**
 * The usage of `speech.audio.done`. Input tokens are what the model was fed (phoneme ids for
 * Kokoro, characters for VITS); output tokens stand for the audio returned, one per started
 * 20 ms at the speed asked for (after any time-stretch), whatever the format.
 */
export function speechUsage(inputTokens: number, audioSamples: number, sampleRate: number): SpeechUsage {
    const outputTokens = Math.ceil(audioSamples * outputTokensPerSecond / sampleRate);
    return {input_tokens: inputTokens, output_tokens: outputTokens, total_tokens: inputTokens + outputTokens};
}
