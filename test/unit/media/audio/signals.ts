/** Deterministic test signals and a seeded generator, so every run pushes the same audio in the same chunks. */
import { seededRandom } from "../../../support/seededRandom.js";


/** Sines at 220, 1000 and 3000 Hz, then white noise, then silence, then the sines again: each a quarter of the length. */
export function mixedSignal(sampleRate: number, seconds: number, seed = 1): Float32Array {
    const random = seededRandom(seed);
    const out = new Float32Array(Math.round(sampleRate * seconds));
    const quarter = Math.floor(out.length / 4);
    for (let i = 0; i < out.length; i++) {
        const t = i / sampleRate;
        const sines = 0.3 * Math.sin(2 * Math.PI * 220 * t) + 0.2 * Math.sin(2 * Math.PI * 1000 * t) + 0.1 * Math.sin(2 * Math.PI * 3000 * t);
        const part = Math.floor(i / quarter);
        out[i] = part === 1 ? 0.3 * (2 * random() - 1) : part === 2 ? 0 : sines;
    }
    return out;
}

/**
 * Speech-like: "syllables" of a harmonic tone with a gliding pitch (110-220 Hz) and formant-ish harmonic weights,
 * under a smooth envelope, separated by short pauses and an unvoiced (noise) burst.
 */
export function sentenceLikeSignal(sampleRate: number, seed = 2): Float32Array {
    const random = seededRandom(seed);
    const syllable = Math.round(0.18 * sampleRate);
    const pause = Math.round(0.06 * sampleRate);
    const count = 8;
    const out = new Float32Array(count * (syllable + pause));
    let phase = 0;
    for (let s = 0; s < count; s++) {
        const start = s * (syllable + pause);
        const basePitch = 110 + 110 * random();
        const unvoiced = s % 4 === 3;
        for (let i = 0; i < syllable; i++) {
            const envelope = Math.sin((Math.PI * i) / syllable) ** 2;
            const pitch = basePitch * (1 + 0.2 * (i / syllable - 0.5));
            phase += (2 * Math.PI * pitch) / sampleRate;
            let value = 0;
            if (unvoiced) value = 0.2 * (2 * random() - 1);
            else for (let h = 1; h <= 12; h++) value += (0.25 / h) * (h === 3 || h === 7 ? 2 : 1) * Math.sin(h * phase);
            out[start + i] = 0.8 * envelope * value;
        }
    }
    return out;
}

/** Splits samples into chunks of random length (1 .. maxChunk) from a seeded generator. */
export function randomChunks(samples: Float32Array, seed: number, maxChunk = 3000): Float32Array[] {
    const random = seededRandom(seed);
    const chunks: Float32Array[] = [];
    for (let at = 0; at < samples.length;) {
        const length = 1 + Math.floor(random() * maxChunk);
        chunks.push(samples.slice(at, at + length));
        at += length;
    }
    return chunks;
}
