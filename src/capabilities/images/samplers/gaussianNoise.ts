import { Xoshiro128 } from "./xoshiro128.js";

/** A deterministic stream of standard normal numbers. */
export type GaussianNoise = {
    next(): number;
    /** The next `count` numbers of the stream. */
    take(count: number): Float64Array;
};

/**
 * Standard normals for an integer seed (0 … 2^53 − 1), the same on every platform and run: xoshiro128** keyed by
 * (seed low 32 bits, seed high bits, stream) gives uniform doubles u1, u2 (53 bits each); the Box-Muller transform
 * turns each pair into two normals, √(−2 ln(1 − u1))·cos(2π u2) then ·sin(2π u2). Math.log/cos/sin are V8's fdlibm
 * ports, identical on every OS. `stream` separates independent uses of one seed (0: the initial latent, 1: the
 * samplers' fresh noise, see seededNoiseSource).
 */
export function gaussianNoise(seed: number, stream = 0): GaussianNoise {
    if (!Number.isSafeInteger(seed) || seed < 0)
        throw new Error(`A noise seed must be an integer from 0 to 2^53 - 1, got ${seed}.`);
    const generator = new Xoshiro128([seed >>> 0, Math.floor(seed / 4294967296), stream >>> 0]);
    return fromUniforms(() => generator.nextDouble());
}

/** Box-Muller over a uniform [0, 1) source (two uniforms make two normals, cos first). */
function fromUniforms(uniform: () => number): GaussianNoise {
    let spare: number | null = null;
    const next = () => {
        if (spare != null) {
            const value = spare;
            spare = null;
            return value;
        }
        const radius = Math.sqrt(-2 * Math.log(1 - uniform()));
        const theta = 2 * Math.PI * uniform();
        spare = radius * Math.sin(theta);
        return radius * Math.cos(theta);
    };
    return {
        next,
        take(count) {
            const out = new Float64Array(count);
            for (let i = 0; i < count; i++)
                out[i] = next();
            return out;
        }
    };
}
