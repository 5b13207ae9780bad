import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The reference runs, committed under test/fixtures/samplers (its README gives the conventions). */
export const samplerVectorsPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/samplers/sampler-vectors.json");

export type SamplerVectorCase = {
    sampler: string;
    kdiffusion_function: string | null;
    ddim_variant?: "a1111" | "compvis";
    scheduler: string;
    steps: number;
    denoiser: "linear" | "tanh";
    params: Record<string, number | string>;
    sigmas: number[] | null;
    equivalent_kdiff_sigmas?: number[];
    timesteps?: number[];
    alphas?: number[];
    alphas_prev?: number[];
    x_T_scale: number;
    x_T: number[];
    noises: {call: number, sigma: number, sigma_next: number, noise: number[]}[];
    a1111_randn_like_calls: number | null;
    model_call_sigmas?: number[];
    model_call_timesteps?: number[];
    x_per_step: number[][] | null;
    x_0: number[];
};

export type SamplerVectors = {
    conventions: Record<string, unknown>;
    schedules: {
        train: {beta_start: number, beta_end: number, beta_schedule: string, num_train_timesteps: number};
        betas: number[];
        alphas_cumprod: number[];
        model_sigmas: number[];
        model_log_sigmas: number[];
        sigma_min: number;
        sigma_max: number;
        default: Record<string, {sigmas: number[], t: number[], sigma_to_t: number[]}>;
        karras: Record<string, {sigmas: number[], rho: number, sigma_to_t: number[]}>;
        ddim: Record<string, {timesteps: number[], alphas: number[], alphas_prev: number[], sigmas_at_timesteps: number[]}>;
    };
    cases: SamplerVectorCase[];
};

let cached: SamplerVectors | undefined;

export function loadSamplerVectors(): SamplerVectors {
    if (cached == null) {
        if (!fs.existsSync(samplerVectorsPath))
            throw new Error(`Sampler reference vectors not found at ${samplerVectorsPath} (committed under test/fixtures/samplers/).`);
        cached = JSON.parse(fs.readFileSync(samplerVectorsPath, "utf8")) as SamplerVectors;
    }
    return cached;
}

/** The toy denoisers of the vectors: D(x, σ) = f(x)/(1 + σ²). */
export function toyDenoiser(kind: "linear" | "tanh") {
    const f = kind === "linear" ? (value: number) => value : Math.tanh;
    return (x: Float64Array, sigma: number) => {
        const scale = 1 + sigma * sigma;
        return x.map((value) => f(value) / scale);
    };
}

/** Largest |a − b| / max(1, |b|) over two arrays of the same length. */
export function maxRelativeError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
    if (actual.length !== expected.length)
        throw new Error(`length ${actual.length} != ${expected.length}`);
    let worst = 0;
    for (let i = 0; i < expected.length; i++)
        worst = Math.max(worst, Math.abs(actual[i] - expected[i]) / Math.max(1, Math.abs(expected[i])));
    return worst;
}

/** Largest |a − b| / |b| (b ≠ 0; equal zeros count as 0). */
export function maxStrictRelativeError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
    if (actual.length !== expected.length)
        throw new Error(`length ${actual.length} != ${expected.length}`);
    let worst = 0;
    for (let i = 0; i < expected.length; i++) {
        const diff = Math.abs(actual[i] - expected[i]);
        worst = Math.max(worst, diff === 0 ? 0 : diff / Math.abs(expected[i]));
    }
    return worst;
}
