/** Input samples each side of an output sample that the filter reads: 64 taps, steep enough for -90 dB images. */
const halfTaps = 32;
/** Kaiser window shape parameter for about 90 dB stop-band attenuation. */
const kaiserBeta = 8.6;
/** Passband edge as a fraction of the lower Nyquist rate, leaving the transition band below it so no image or alias survives. */
const rolloff = 0.92;

/**
 * Streaming band-limited sample-rate converter: polyphase windowed-sinc (Kaiser) for any rational ratio.
 * Output sample k sits at input time k·from/to exactly (the filter is centred, not causal), so the result has no delay
 * and is identical however the input is split: each push returns the outputs whose input neighbourhood is complete,
 * `end()` the rest, treating samples past the end (and before the start) as silence.
 * Total output length is ceil(inputLength · to / from).
 */
export class Resampler {
    private readonly up: number;
    private readonly down: number;
    /** phases[p][i]: weight of input sample (centre - halfTaps + 1 + i) for an output at centre + p/up. */
    private readonly phases: Float32Array[];
    private pending = new Float32Array(0);
    /** Absolute index of pending[0] in the input stream. */
    private pendingStart = 0;
    private inputLength = 0;
    private nextOutput = 0;

    constructor(readonly fromRate: number, readonly toRate: number) {
        if (!(Number.isInteger(fromRate) && Number.isInteger(toRate) && fromRate > 0 && toRate > 0))
            throw new RangeError(`sample rates must be positive integers, got ${fromRate} and ${toRate}`);
        const divisor = gcd(fromRate, toRate);
        this.up = toRate / divisor;
        this.down = fromRate / divisor;
        // Cutoff relative to the input's Nyquist rate: downsampling must also remove what the output cannot hold.
        const cutoff = rolloff * Math.min(1, toRate / fromRate);
        this.phases = [];
        for (let phase = 0; phase < this.up; phase++) {
            const taps = new Float32Array(2 * halfTaps);
            for (let i = 0; i < taps.length; i++) {
                const distance = halfTaps - 1 - i + phase / this.up;
                taps[i] = cutoff * sinc(cutoff * distance) * kaiser(distance / halfTaps);
            }
            this.phases.push(taps);
        }
    }

    push(samples: Float32Array): Float32Array {
        const joined = new Float32Array(this.pending.length + samples.length);
        joined.set(this.pending);
        joined.set(samples, this.pending.length);
        this.pending = joined;
        this.inputLength += samples.length;
        // Output k needs input up to index floor(k·down/up) + halfTaps, i.e. k < (inputLength - halfTaps)·up/down.
        const ready = Math.max(this.nextOutput, Math.ceil(((this.inputLength - halfTaps) * this.up) / this.down));
        return this.produce(ready);
    }

    end(): Float32Array {
        return this.produce(Math.ceil((this.inputLength * this.up) / this.down));
    }

    private produce(untilOutput: number): Float32Array {
        const out = new Float32Array(Math.max(0, untilOutput - this.nextOutput));
        for (let n = 0; n < out.length; n++) {
            const k = this.nextOutput + n;
            const centre = Math.floor((k * this.down) / this.up);
            const taps = this.phases[(k * this.down) % this.up];
            const first = centre - halfTaps + 1;
            let sum = 0;
            for (let i = 0; i < taps.length; i++) {
                const at = first + i - this.pendingStart;
                if (at >= 0 && at < this.pending.length) sum += taps[i] * this.pending[at];
            }
            out[n] = sum;
        }
        this.nextOutput += out.length;
        // Keep only what later outputs can still reach.
        const keepFrom = Math.floor((this.nextOutput * this.down) / this.up) - halfTaps + 1;
        const drop = Math.min(this.pending.length, keepFrom - this.pendingStart);
        if (drop > 0) {
            this.pending = this.pending.slice(drop);
            this.pendingStart += drop;
        }
        return out;
    }
}

function gcd(a: number, b: number): number {
    return b === 0 ? a : gcd(b, a % b);
}

function sinc(x: number): number {
    return x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
}

/** Kaiser window at t in [-1, 1] (0 outside). */
function kaiser(t: number): number {
    if (Math.abs(t) > 1) return 0;
    return besselI0(kaiserBeta * Math.sqrt(1 - t * t)) / besselI0(kaiserBeta);
}

/** Modified Bessel function of the first kind, order 0, by its power series (converges fast for the betas used here). */
function besselI0(x: number): number {
    let sum = 1;
    let term = 1;
    for (let k = 1; k < 50 && term > 1e-12 * sum; k++) {
        term *= (x / (2 * k)) ** 2;
        sum += term;
    }
    return sum;
}
