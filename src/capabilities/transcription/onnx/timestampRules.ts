import type { Tensor } from "@huggingface/transformers";

/**
 * Two of OpenAI's timestamp rules (ApplyTimestampRules) that transformers.js's WhisperTimeStampLogitsProcessor
 * leaves out (its check of the first timestamp is never reached, and it has no monotonicity rule): the first
 * timestamp is at most `maxInitialIndex` steps of 20 ms (1 s in Whisper's configs), and timestamps never go
 * back - after a segment's closing timestamp the next one is not smaller, and a segment is never empty.
 */
export function timestampRules(timestampBegin: number, beginIndex: number, maxInitialIndex: number | null): (ids: bigint[][], logits: Tensor) => Tensor {
    return (ids, logits) => {
        const vocabulary = logits.dims.at(-1)!;
        ids.forEach((sequence, row) => {
            const scores = (logits.data as Float32Array).subarray(row * vocabulary, (row + 1) * vocabulary);
            if (sequence.length === beginIndex) {
                if (maxInitialIndex != null)
                    scores.fill(-Infinity, timestampBegin + maxInitialIndex + 1);
                return;
            }
            const generated = sequence.slice(beginIndex).map(Number);
            const timestamps = generated.filter((token) => token >= timestampBegin);
            if (timestamps.length === 0)
                return;
            const last = generated.at(-1)!;
            const penultimate = generated.at(-2);
            const lastWasTimestamp = last >= timestampBegin;
            const penultimateWasTimestamp = penultimate == null || penultimate >= timestampBegin;
            // Right after a closing timestamp the same time may open the next segment; otherwise a later one.
            const floor = lastWasTimestamp && !penultimateWasTimestamp ? timestamps.at(-1)! : timestamps.at(-1)! + 1;
            scores.fill(-Infinity, timestampBegin, Math.min(floor, vocabulary));
        });
        return logits;
    };
}
