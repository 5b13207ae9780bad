import type { Xoshiro128 } from "./xoshiro128.js";

/**
 * `count` normals straight from a generator, the same numbers and order as `gaussianNoise`'s Box-Muller: the fast
 * path for the Brownian tree's per-node noise.
 */
export function normalsFrom(generator: Xoshiro128, count: number): Float64Array {
    const out = new Float64Array(count);
    for (let i = 0; i < count; i += 2) {
        const radius = Math.sqrt(-2 * Math.log(1 - generator.nextDouble()));
        const theta = 2 * Math.PI * generator.nextDouble();
        out[i] = radius * Math.cos(theta);
        if (i + 1 < count)
            out[i + 1] = radius * Math.sin(theta);
    }
    return out;
}
