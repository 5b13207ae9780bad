import { AudioTooLongError, checkSampleRate } from "./audioRefusals.js";
import type { AudioChunk } from "./AudioStream.js";

/**
 * Counts a decoder's pieces against the limit: each piece's rate is checked (checkSampleRate) and its length
 * added before it is accepted (AudioTooLongError as soon as the total would pass `maxSeconds`), across changes
 * of rate (MP3 and chained Ogg may change rate mid-file).
 */
export class AudioClock {
    private rate = 0;
    /** Seconds in the runs of other rates before the current one. */
    private earlierSeconds = 0;
    private framesAtRate = 0;
    /** The first piece's rate and channel count. */
    source: {sampleRate: number, channels: number} | null = null;

    constructor(private readonly format: string, private readonly maxSeconds: number) {}

    get seconds() {
        return this.earlierSeconds + (this.rate === 0 ? 0 : this.framesAtRate / this.rate);
    }

    /** Accepts a piece, or throws; true when it starts a run of another rate than the piece before. An empty piece (headers only) counts nothing. */
    count({channels, sampleRate}: AudioChunk): boolean {
        const frames = channels[0]?.length ?? 0;
        if (frames === 0)
            return false;
        checkSampleRate(sampleRate, this.format);
        const newRate = sampleRate !== this.rate;
        const [earlier, before] = newRate ? [this.seconds, 0] : [this.earlierSeconds, this.framesAtRate];
        if (earlier + (before + frames) / sampleRate > this.maxSeconds)
            throw new AudioTooLongError(this.maxSeconds, null);
        this.source ??= {sampleRate, channels: channels.length};
        this.earlierSeconds = earlier;
        this.framesAtRate = before + frames;
        this.rate = sampleRate;
        return newRate;
    }
}
