import { normalsFrom } from "./normalsFrom.js";
import type { NoiseSource } from "./NoiseSource.js";
import { Xoshiro128 } from "./xoshiro128.js";

/**
 * Depth of the dyadic grid: leaves are (σmax − σmin)/2^20 wide (1.4e-5 for SD), far below the distance between any two
 * sigmas a sampler queries (> 1e-3 at 50 Karras steps), so no two queried points share a leaf.
 */
const maxDepth = 20;
/** Grid midpoints kept: consecutive queries share the top of their paths (about two full paths). */
const nodeCacheSize = 2 * maxDepth;

/**
 * The noise source A1111 gives DPM++ SDE (k-diffusion `BrownianTreeNoiseSampler`): one Brownian path W of `length`
 * independent components on [sigmaMin, sigmaMax], W(sigmaMin) = 0, and each call returns
 * (W(σ_next) − W(σ)) / √|σ_next − σ|, a standard normal; two calls that share σ are correlated as real Brownian
 * increments.
 *
 * The path is defined on a fixed dyadic grid, so every value depends only on the seed and the point, never on the
 * order or number of queries: W(σmax) = √(σmax − σmin)·Z(root); the midpoint of grid cell (depth d, index k) with
 * ends l, r is the Brownian bridge (W(l) + W(r))/2 + √((r − l)/4)·Z(d, k); a point inside a leaf cell is
 * bridged once more from the cell's ends with noise keyed by the point's float64 bits. Each Z is `length` normals
 * from xoshiro128** keyed by (seed, depth, index) through Box-Muller (see gaussianNoise). Points are clamped into
 * [sigmaMin, sigmaMax] (k-diffusion's exp(−(−log σ)) round trips can leave it by an ulp). The numbers are not
 * torchsde's, so A1111's exact pixels are not reproduced; their statistics are. The last few path values and grid
 * midpoints are cached (a miss recomputes the same numbers).
 */
export function brownianTreeNoise(seed: number, sigmaMin: number, sigmaMax: number, length: number): NoiseSource {
    if (!Number.isSafeInteger(seed) || seed < 0)
        throw new Error(`A noise seed must be an integer from 0 to 2^53 - 1, got ${seed}.`);
    if (!(sigmaMin > 0 && sigmaMax >= sigmaMin))
        throw new Error(`The Brownian tree needs 0 < sigmaMin <= sigmaMax, got ${sigmaMin}, ${sigmaMax}.`);
    if (sigmaMax === sigmaMin) {
        // A one-step DPM++ SDE plan ([σmax, 0]) has this interval and never draws noise.
        return (sigma, sigmaNext) => {
            throw new Error(`The Brownian tree over the single point ${sigmaMin} has no increment from ${sigma} to ${sigmaNext}.`);
        };
    }
    const seedLow = seed >>> 0;
    const seedHigh = Math.floor(seed / 4294967296);
    const width = sigmaMax - sigmaMin;
    // Tag 0: W(sigmaMax); tag 1: the midpoint of cell (depth, index); tag 2: a point inside leaf cell `index`.
    const normals = (...key: number[]) => {
        return normalsFrom(new Xoshiro128([seedLow, seedHigh, ...key]), length);
    };
    const rootValue = normals(0, 0, 0).map((z) => Math.sqrt(width) * z);
    const zero = new Float64Array(length);
    const cache = new Map<number, Float64Array>();
    const nodeCache = new Map<string, Float64Array>();
    const pointBits = new DataView(new ArrayBuffer(8));

    const valueAt = (point: number): Float64Array => {
        const s = Math.min(Math.max(point, sigmaMin), sigmaMax);
        const cached = cache.get(s);
        if (cached)
            return cached;
        let left = sigmaMin;
        let right = sigmaMax;
        let leftValue: Float64Array = zero;
        let rightValue: Float64Array = rootValue;
        let index = 0;
        let result: Float64Array | null = s === sigmaMin ? zero : s === sigmaMax ? rootValue : null;
        for (let depth = 0; result == null && depth < maxDepth; depth++) {
            const middle = sigmaMin + width * ((2 * index + 1) / 2 ** (depth + 1));
            const key = `${depth}:${index}`;
            let middleValue = nodeCache.get(key);
            if (middleValue == null) {
                const z = normals(1, depth, index);
                const spread = Math.sqrt((right - left) / 4);
                middleValue = new Float64Array(length);
                for (let j = 0; j < length; j++)
                    middleValue[j] = (leftValue[j] + rightValue[j]) / 2 + spread * z[j];
            } else {
                nodeCache.delete(key);
            }
            nodeCache.set(key, middleValue);
            if (nodeCache.size > nodeCacheSize)
                nodeCache.delete(nodeCache.keys().next().value!);
            if (s === middle)
                result = middleValue;
            else if (s < middle) {
                right = middle;
                rightValue = middleValue;
                index = 2 * index;
            } else {
                left = middle;
                leftValue = middleValue;
                index = 2 * index + 1;
            }
        }
        if (result == null) {
            pointBits.setFloat64(0, s);
            const z = normals(2, maxDepth, index, pointBits.getUint32(0), pointBits.getUint32(4));
            const fraction = (s - left) / (right - left);
            const spread = Math.sqrt((s - left) * (right - s) / (right - left));
            result = new Float64Array(length);
            for (let j = 0; j < length; j++)
                result[j] = leftValue[j] + fraction * (rightValue[j] - leftValue[j]) + spread * z[j];
        }
        if (cache.size >= 4)
            cache.delete(cache.keys().next().value!);
        cache.set(s, result);
        return result;
    };

    return (sigma, sigmaNext) => {
        const from = valueAt(sigma);
        const to = valueAt(sigmaNext);
        const scale = 1 / Math.sqrt(Math.abs(sigmaNext - sigma));
        return to.map((value, j) => (value - from[j]) * scale);
    };
}
