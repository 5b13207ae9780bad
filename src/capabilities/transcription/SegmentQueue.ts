import type { TranscriptSegment } from "./TranscriptionEngine.js";

/**
 * Hands a running transcription's segments, window by window, to the code writing the response:
 * `next()` resolves with the next batch, null at the end, or rejects with the transcription's error.
 */
export class SegmentQueue {
    private readonly batches: TranscriptSegment[][] = [];
    private ended = false;
    private error: unknown = null;
    private wake: (() => void) | null = null;

    push(segments: TranscriptSegment[]) {
        this.batches.push(segments);
        this.notify();
    }

    end(error: unknown = null) {
        this.ended = true;
        this.error = error;
        this.notify();
    }

    async next(): Promise<TranscriptSegment[] | null> {
        for (;;) {
            const batch = this.batches.shift();
            if (batch != null)
                return batch;
            if (this.ended) {
                if (this.error != null)
                    throw this.error;
                return null;
            }
            await new Promise<void>((resolve) => this.wake = resolve);
        }
    }

    private notify() {
        const wake = this.wake;
        this.wake = null;
        wake?.();
    }
}
