/**
 * MT19937 (Matsumoto & Nishimura), 32-bit outputs, seeded with `init_genrand(seed & 0xffffffff)`: the engine behind
 * torch's CPU generator (`torch.manual_seed`) and numpy's legacy RandomState. Reference output: seed 5489 gives
 * 3499211612 first.
 */
export class Mt19937 {
    private readonly state = new Uint32Array(624);
    private index = 624;

    constructor(seed: number) {
        this.state[0] = seed >>> 0;
        for (let i = 1; i < 624; i++) {
            const previous = this.state[i - 1] ^ (this.state[i - 1] >>> 30);
            this.state[i] = (Math.imul(1812433253, previous) + i) >>> 0;
        }
    }

    nextUint32(): number {
        if (this.index >= 624)
            this.twist();
        let y = this.state[this.index++];
        y ^= y >>> 11;
        y ^= (y << 7) & 0x9d2c5680;
        y ^= (y << 15) & 0xefc60000;
        y ^= y >>> 18;
        return y >>> 0;
    }

    private twist() {
        const state = this.state;
        for (let i = 0; i < 624; i++) {
            const y = (state[i] & 0x80000000) | (state[(i + 1) % 624] & 0x7fffffff);
            state[i] = state[(i + 397) % 624] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
        }
        this.index = 0;
    }
}
