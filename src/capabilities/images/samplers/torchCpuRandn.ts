import { Mt19937 } from "./Mt19937.js";

/**
 * `torch.manual_seed(seed)` then successive `torch.randn(count)` calls on the CPU in float32, for A1111's
 * "RNG source: CPU" seeds (its ImageRNG draws the initial latent with one randn of the latent's shape, then one per
 * `randn_like`, e.g. each Euler a noise, from the same generator). torch's `normal_fill` for float tensors of >= 16
 * numbers: `count` uniforms (mt19937 output & 0xffffff) / 2^24, then Box-Muller per block of 16 (u1 = 1 − data[j],
 * u2 = data[j + 8], j < 8: data[j] = r·cos θ, data[j + 8] = r·sin θ, r = √(−2 ln u1), θ = 2π·u2), and when count is
 * not a multiple of 16, 16 fresh uniforms for the last 16 numbers. Float32 steps are emulated with Math.fround;
 * torch's scalar path matches bit for bit (torch.randn(4, 4) after manual_seed(0) is tested), its AVX2 path uses
 * approximate log/sincos and can differ in the last float32 bit.
 */
export function torchCpuRandn(seed: number): {randn(count: number): Float64Array} {
    const generator = new Mt19937(seed);
    const uniform = () => (generator.nextUint32() & 0xffffff) / 16777216;
    const fill16 = (data: Float64Array, offset: number) => {
        for (let j = 0; j < 8; j++) {
            const u1 = Math.fround(1 - data[offset + j]);
            const u2 = data[offset + j + 8];
            const radius = Math.fround(Math.sqrt(Math.fround(-2 * Math.fround(Math.log(u1)))));
            const theta = Math.fround(2 * Math.PI * u2);
            data[offset + j] = Math.fround(radius * Math.fround(Math.cos(theta)));
            data[offset + j + 8] = Math.fround(radius * Math.fround(Math.sin(theta)));
        }
    };
    return {
        randn(count) {
            if (!Number.isInteger(count) || count < 16)
                throw new Error(`torchCpuRandn draws tensors of at least 16 numbers (torch's vectorised path), got ${count}.`);
            const data = new Float64Array(count);
            for (let i = 0; i < count; i++)
                data[i] = uniform();
            for (let i = 0; i + 16 <= count; i += 16)
                fill16(data, i);
            if (count % 16 !== 0) {
                const offset = count - 16;
                for (let i = 0; i < 16; i++)
                    data[offset + i] = uniform();
                fill16(data, offset);
            }
            return data;
        }
    };
}
