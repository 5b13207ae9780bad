/**
 * The seed of choice `index` as the uint32 llama.cpp takes. OpenAI seeds are 64-bit integers, so
 * the value is mixed (splitmix-style) rather than truncated: seeds that differ only in high bits
 * still sample differently, and choice 1 of seed s is not choice 0 of seed s+1.
 */
export function choiceSeed(seed: number, index: number): number {
    let x = BigInt.asUintN(64, BigInt(Math.trunc(seed)) + BigInt(index) * 0x9E3779B97F4A7C15n);
    x = BigInt.asUintN(64, (x ^ (x >> 30n)) * 0xBF58476D1CE4E5B9n);
    x = BigInt.asUintN(64, (x ^ (x >> 27n)) * 0x94D049BB133111EBn);
    x ^= x >> 31n;
    return Number(x & 0xFFFFFFFFn);
}
