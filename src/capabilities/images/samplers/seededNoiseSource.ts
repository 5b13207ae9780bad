import { gaussianNoise } from "./gaussianNoise.js";
import type { NoiseSource } from "./NoiseSource.js";

/**
 * Independent standard-normal tensors of `length` numbers for Euler a (and DDIM with eta > 0), drawn in order from
 * `gaussianNoise(seed, 1)`: stream 1, so they never repeat the initial latent's numbers (stream 0). Same seed, same
 * sequence; the sigmas it is called with do not matter.
 */
export function seededNoiseSource(seed: number, length: number): NoiseSource {
    const noise = gaussianNoise(seed, 1);
    return () => noise.take(length);
}
