import { joinSamples } from "../joinSamples.js";
import { Resampler } from "../Resampler.js";
import { AudioClock } from "./AudioClock.js";
import type { AudioChunk } from "./AudioStream.js";

/**
 * Collects a decoder's pieces as one mono channel at `outputRate`, a piece at a time: each piece is counted
 * against the limit first (AudioClock: nothing past the limit is ever held), then mixed to mono and resampled
 * (a streaming Resampler per run of one rate), so what is held is the output alone, never the file's own
 * channels and rate.
 */
export class MonoCollector {
    readonly clock: AudioClock;
    private readonly parts: Float32Array[] = [];
    private resampler: Resampler | null = null;

    constructor(format: string, private readonly outputRate: number, maxSeconds: number) {
        this.clock = new AudioClock(format, maxSeconds);
    }

    push(chunk: AudioChunk) {
        const frames = chunk.channels[0]?.length ?? 0;
        if (frames === 0)
            return;
        if (this.clock.count(chunk)) {
            this.endRun();
            this.resampler = chunk.sampleRate === this.outputRate ? null : new Resampler(chunk.sampleRate, this.outputRate);
        }
        const mono = mixToMono(chunk.channels, frames);
        this.parts.push(this.resampler == null ? mono : this.resampler.push(mono));
    }

    /** The whole signal, once the decoder is done. */
    finish(): Float32Array {
        this.endRun();
        const samples = joinSamples(this.parts);
        this.parts.length = 0;
        return samples;
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
