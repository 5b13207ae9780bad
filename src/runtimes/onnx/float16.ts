/**
 * IEEE 754 half-precision conversion for ONNX tensors of type float16 (Node 20 has no Float16Array):
 * float32 -> float16 rounds to nearest, ties to even, overflows to infinity, keeps subnormals and NaN;
 * float16 -> float32 is exact.
 */
const float = new Float32Array(1);
const bits = new Uint32Array(float.buffer);

export const float16 = {
    fromFloat32(values: ArrayLike<number>): Uint16Array {
        const out = new Uint16Array(values.length);
        for (let i = 0; i < values.length; i++)
            out[i] = halfBits(values[i]);
        return out;
    },
    toFloat32(halves: Uint16Array): Float32Array {
        const out = new Float32Array(halves.length);
        for (let i = 0; i < halves.length; i++)
            out[i] = halfValue(halves[i]);
        return out;
    }
};

function halfBits(value: number): number {
    float[0] = value;
    const x = bits[0];
    const sign = (x >>> 16) & 0x8000;
    const exponent = (x >>> 23) & 0xff;
    let mantissa = x & 0x7fffff;
    if (exponent === 0xff)
        return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
    const unbiased = exponent - 127;
    if (unbiased > 15)
        return sign | 0x7c00;
    if (unbiased >= -14) {
        // Normal half: 10 mantissa bits, round to nearest even on the 13 dropped bits (a carry may bump the exponent, correctly).
        let half = ((unbiased + 15) << 10) | (mantissa >>> 13);
        const rest = mantissa & 0x1fff;
        if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1))
            half++;
        return sign | half;
    }
    if (unbiased < -25)
        return sign;
    // Subnormal half: value = m * 2^-24 with the implicit bit made explicit.
    mantissa |= 0x800000;
    const shift = -unbiased - 14 + 13;
    let half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && (half & 1) === 1))
        half++;
    return sign | half;
}

function halfValue(half: number): number {
    const sign = half & 0x8000 ? -1 : 1;
    const exponent = (half >>> 10) & 0x1f;
    const mantissa = half & 0x3ff;
    if (exponent === 0)
        return sign * mantissa * 2 ** -24;
    if (exponent === 0x1f)
        return mantissa !== 0 ? NaN : sign * Infinity;
    return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}
