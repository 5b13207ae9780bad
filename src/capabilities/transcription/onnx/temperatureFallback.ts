/**
 * Whisper's temperature fallback (OpenAI's transcribe.py, as faster-whisper and whisper.cpp do it): a
 * window decoded greedily whose text is too repetitive (zlib compression ratio above 2.4, the loops
 * Whisper falls into) or whose tokens are unlikely (average log-probability below -1) is decoded again,
 * sampled at 0.2, 0.4 ... 1.0, until one passes. A window where `<|nospeech|>` is likely (above 0.6) and
 * the text unlikely is silence: it needs no fallback and gives no segments.
 */
export const temperatureFallback = {
    compressionRatio: 2.4,
    avgLogprob: -1,
    noSpeechProb: 0.6,

    /**
     * The temperatures a window is tried at: from 0, every 0.2 up to 1 (OpenAI's "increase the temperature"); a
     * temperature above 0, or 0 with the fallback switched off, is used alone.
     */
    schedule(requested: number, fallback = true): number[] {
        return requested > 0 || !fallback ? [requested] : [0, 0.2, 0.4, 0.6, 0.8, 1];
    },

    /** `accept`: keep this decode; `retry`: decode at the next temperature; `silence`: keep nothing of the window. */
    judge(quality: WindowQuality): "accept" | "retry" | "silence" {
        const unlikely = quality.avgLogprob < temperatureFallback.avgLogprob;
        if (quality.noSpeechProb > temperatureFallback.noSpeechProb && unlikely)
            return "silence";
        return unlikely || quality.compressionRatio > temperatureFallback.compressionRatio ? "retry" : "accept";
    },

    /**
     * When no temperature passed: the decode with the best average log-probability among those that are not
     * repetitive, else among all (faster-whisper's choice; OpenAI keeps the last, sampled at 1).
     */
    best<T extends {quality: WindowQuality}>(attempts: readonly T[]): T {
        const varied = attempts.filter((attempt) => attempt.quality.compressionRatio <= temperatureFallback.compressionRatio);
        const candidates = varied.length > 0 ? varied : attempts;
        return candidates.reduce((best, attempt) => attempt.quality.avgLogprob > best.quality.avgLogprob ? attempt : best);
    }
};

/** What the fallback looks at in one decoded window (its whole text and all its tokens). */
export type WindowQuality = {compressionRatio: number, avgLogprob: number, noSpeechProb: number};
