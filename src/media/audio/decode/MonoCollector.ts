import { joinSamples } from "../joinSamples.js";
import { Resampler } from "../Resampler.js";
import { AudioTooLongError, checkSampleRate } from "./audioRefusals.js";
import type { AudioChunk } from "./AudioStream.js";

/**
 * Collects a decoder's pieces as one mono channel at `outputRate`, a piece at a time: each piece's rate is
 * checked (checkSampleRate), its length counted against `maxSeconds` before it is kept (AudioTooLongError:
 * nothing past the limit is ever held), then mixed to mono and resampled (a streaming Resampler per run of
 * one rate), so what is held is the output alone, never the file's own channels and rate.
 */
export class MonoCollector {
    private readonly parts: Float32Array[] = [];
    private resampler: Resampler | null = null;
    private rate = 0;
    /** Seconds in the runs of other rates before the current one (MP3 and chained Ogg may change rate). */
    private earlierSeconds = 0;
    private framesAtRate = 0;
    /** The first piece's rate and channel count. */
    source: {sampleRate: number, channels: number} | null = null;

    constructor(private readonly format: string, private readonly outputRate: number, private readonly maxSeconds: number) {}

    get seconds() {
        return this.earlierSeconds + (this.rate === 0 ? 0 : this.framesAtRate / this.rate);
    }

    push({channels, sampleRate}: AudioChunk) {
        const frames = channels[0]?.length ?? 0;
        if (frames === 0)
            return;
        checkSampleRate(sampleRate, this.format);
        if (sampleRate !== this.rate)
            this.startRun(sampleRate);
        if (this.earlierSeconds + (this.framesAtRate + frames) / sampleRate > this.maxSeconds)
            throw new AudioTooLongError(this.maxSeconds, null);
        this.source ??= {sampleRate, channels: channels.length};
        this.framesAtRate += frames;
        const mono = mixToMono(channels, frames);
        this.parts.push(this.resampler == null ? mono : this.resampler.push(mono));
    }

    /** The whole signal, once the decoder is done. */
    finish(): Float32Array {
        this.endRun();
        const samples = joinSamples(this.parts);
        this.parts.length = 0;
        return samples;
    }

    private startRun(sampleRate: number) {
        this.endRun();
        this.earlierSeconds = this.seconds;
        this.rate = sampleRate;
        this.framesAtRate = 0;
        this.resampler = sampleRate === this.outputRate ? null : new Resampler(sampleRate, this.outputRate);
    }

    private endRun() {
        if (this.resampler != null)
            this.parts.push(this.resampler.end());
        this.resampler = null;
    }
}

/**
 * The channels' average, in an array that owns its buffer. A lone channel that fills its own buffer is kept
 * as it is (the decoders here hand out each piece in new arrays, copied out of their WebAssembly memory);
 * a view of a larger buffer is copied, so that what is kept never holds more memory than its samples.
 */
function mixToMono(channels: readonly Float32Array[], frames: number): Float32Array {
    if (channels.length === 1) {
        const [channel] = channels;
        return channel.byteOffset === 0 && channel.length === frames && channel.byteLength === channel.buffer.byteLength ? channel : channel.slice(0, frames);
    }
    const mono = new Float32Array(frames);
    for (const channel of channels)
        for (let i = 0; i < frames; i++)
            mono[i] += channel[i] / channels.length;
    return mono;
}
