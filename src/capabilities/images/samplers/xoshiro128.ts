/**
 * The generator behind every seeded noise here: xoshiro128** 1.1 (Blackman & Vigna) with a 128-bit state filled from
 * `words` by a chain of MurmurHash3 32-bit finalisers (`seedState`). Pure 32-bit integer arithmetic (Math.imul, >>>),
 * so its output is the same on every platform and Node version. `nextDouble` makes a uniform double in [0, 1) from 53
 * random bits of two outputs.
 */
export class Xoshiro128 {
    private s0: number;
    private s1: number;
    private s2: number;
    private s3: number;

    /** Keyed by any number of 32-bit words (seed, stream, node...). */
    constructor(words: readonly number[]) {
        [this.s0, this.s1, this.s2, this.s3] = seedState(words);
    }

    /** A generator with exactly this state (for checking against the reference implementation's published outputs). */
    static withState(state: readonly [number, number, number, number]): Xoshiro128 {
        const generator = new Xoshiro128([]);
        [generator.s0, generator.s1, generator.s2, generator.s3] = state.map((word) => word | 0);
        return generator;
    }

    nextUint32(): number {
        const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
        const t = this.s1 << 9;
        this.s2 ^= this.s0;
        this.s3 ^= this.s1;
        this.s1 ^= this.s2;
        this.s0 ^= this.s3;
        this.s2 ^= t;
        this.s3 = rotl(this.s3, 11);
        return result;
    }

    nextDouble(): number {
        const high = this.nextUint32() >>> 5;
        const low = this.nextUint32() >>> 6;
        return (high * 67108864 + low) / 9007199254740992;
    }
}

function rotl(x: number, k: number) {
    return (x << k) | (x >>> (32 - k));
}

function fmix32(h: number) {
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    return h >>> 0;
}

/** Four state words from the key words: h_k = fmix32(h_{k-1} ^ word + golden ratio), state word i = fmix32(h + i·golden). */
function seedState(words: readonly number[]): [number, number, number, number] {
    let h = 0x243f6a88;
    for (const word of words)
        h = fmix32((h ^ (word >>> 0)) + 0x9e3779b9 >>> 0);
    const state = [0, 1, 2, 3].map((i) => fmix32(h + Math.imul(i + 1, 0x9e3779b9) >>> 0)) as [number, number, number, number];
    if (state.every((word) => word === 0))
        state[0] = 1;
    return state;
}
