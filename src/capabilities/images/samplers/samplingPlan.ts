import { samplerNames, type SamplerName } from "./samplerNames.js";
import { timestepToSigma } from "./timestepToSigma.js";
import { torchLinspace } from "./torchLinspace.js";
import type { TrainingSchedule } from "./trainingSchedule.js";

/** Which DDIM: "compvis" = N updates ending at ᾱ₀ (A1111 <= 1.5, diffusers DDIM); "a1111" = A1111 >= 1.6 (N−1 updates). */
export type DdimVariant = "compvis" | "a1111";

/** Everything a run of one sampler needs besides the denoiser, x_T and the noise (see `samplingPlan`). */
export type SamplingPlan = {
    sampler: SamplerName;
    /** The requested step count N. */
    steps: number;
    schedule: TrainingSchedule;
    /**
     * k-diffusion samplers: the N+1 sigmas handed to the sampler, descending, ending in 0.
     * DDIM: the noise levels it visits, σ(ᾱ) of each timestep from the first to the one it ends at (its exact
     * equivalent as Euler in x = z/√ᾱ), so sigmas[0] is the starting level and the last entry is where it stops.
     */
    sigmas: Float64Array;
    /** DDIM only. */
    ddim: null | {
        variant: DdimVariant;
        /** Ascending, as A1111 builds them. */
        timesteps: Int32Array;
        /** ᾱ at each timestep and ᾱ at the previous entry (ᾱ₀ for the first), indexed like `timesteps`. */
        alphas: Float64Array;
        alphasPrev: Float64Array;
    };
    /** Ancestral / SDE eta (1 = A1111's default) and DDIM eta (0 = A1111's default). */
    eta: number;
    sNoise: number;
    /** The interval a Brownian-tree noise source must cover (DPM++ SDE): the smallest positive and largest sigma. */
    noiseInterval: {sigmaMin: number, sigmaMax: number};
    /** How many times the sampler calls the denoiser, calls onStep, and draws noise. */
    modelCalls: number;
    stepCount: number;
    noiseCalls: number;
};

export type SamplingPlanOptions = {
    /**
     * Default "compvis": N updates down to ᾱ₀. "a1111" is A1111 >= 1.6, whose last timestep is never denoised
     * (N = 1 does nothing).
     */
    ddimVariant?: DdimVariant;
    /**
     * Sigmas of Euler, Euler a and Heun. "kdiffusion" (default) is A1111's `model_wrap.get_sigmas(N)`:
     * t = linspace(T−1, 0, N) mapped through the log-interpolated table. "leading" | "linspace" | "trailing" are
     * diffusers' EulerDiscreteScheduler spacings (sigma interpolated linearly at the timesteps, as diffusers does),
     * "config" = the config's timestep_spacing; distilled models such as SD-Turbo want "trailing". The Karras
     * samplers and DDIM ignore it.
     */
    spacing?: "kdiffusion" | "leading" | "linspace" | "trailing" | "config";
    /** Euler a / DPM++ SDE: default 1 (A1111's eta_ancestral). DDIM: default 0 (A1111's eta_ddim). */
    eta?: number;
    /** Default 1. */
    sNoise?: number;
};

const karrasSamplers = new Set<SamplerName>(["DPM++ 2M Karras", "DPM++ SDE Karras"]);

/**
 * The schedule A1111 would run for `steps` steps of `sampler` on this training schedule: k-diffusion's default
 * sigmas (Euler, Euler a, Heun), Karras sigmas with rho 7 between the table ends (DPM++ 2M/SDE Karras), or A1111's
 * uniform DDIM timesteps `clip(range(0, T, T//N) + 1, 0, T−1)` (the "compvis" variant: exactly N timesteps
 * `k·(T//N) + 1`, k < N, the same list whenever N divides T). docs/samplers.md lists the sources.
 */
export function samplingPlan(sampler: SamplerName, steps: number, schedule: TrainingSchedule, options: SamplingPlanOptions = {}): SamplingPlan {
    if (!samplerNames.includes(sampler))
        throw new Error(`Unknown sampler '${sampler}'; expected one of ${samplerNames.join(", ")}.`);
    const trainSteps = schedule.sigmas.length;
    if (!Number.isInteger(steps) || steps < 1 || steps > trainSteps)
        throw new Error(`steps must be an integer from 1 to ${trainSteps}, got ${steps}.`);
    const sNoise = options.sNoise ?? 1;
    if (sampler === "DDIM")
        return ddimPlan(steps, schedule, options.ddimVariant ?? "compvis", options.eta ?? 0, sNoise);

    const sigmas = karrasSamplers.has(sampler)
        ? karrasSigmas(steps, schedule.sigmaMin, schedule.sigmaMax, 7)
        : defaultSigmas(steps, schedule, options.spacing ?? "kdiffusion");
    const positive = Array.from(sigmas).filter((sigma) => sigma > 0);
    const zeroEnd = (i: number) => sigmas[i + 1] === 0;
    let modelCalls = 0;
    let noiseCalls = 0;
    for (let i = 0; i < steps; i++) {
        const twoCalls = (sampler === "Heun" || sampler === "DPM++ SDE Karras") && !zeroEnd(i);
        modelCalls += twoCalls ? 2 : 1;
        if (sampler === "Euler a" && !zeroEnd(i))
            noiseCalls += 1;
        if (sampler === "DPM++ SDE Karras" && !zeroEnd(i))
            noiseCalls += 2;
    }
    return {
        sampler, steps, schedule, sigmas, ddim: null, eta: options.eta ?? 1, sNoise,
        noiseInterval: {sigmaMin: Math.min(...positive), sigmaMax: Math.max(...sigmas)},
        modelCalls, stepCount: steps, noiseCalls
    };
}

/** k-diffusion `get_sigmas_karras(n, sigma_min, sigma_max, rho)` with a 0 appended. */
function karrasSigmas(steps: number, sigmaMin: number, sigmaMax: number, rho: number): Float64Array {
    const ramp = torchLinspace(0, 1, steps);
    const minInvRho = sigmaMin ** (1 / rho);
    const maxInvRho = sigmaMax ** (1 / rho);
    const sigmas = new Float64Array(steps + 1);
    for (let i = 0; i < steps; i++)
        sigmas[i] = (maxInvRho + ramp[i] * (minInvRho - maxInvRho)) ** rho;
    return sigmas;
}

function defaultSigmas(steps: number, schedule: TrainingSchedule, spacing: NonNullable<SamplingPlanOptions["spacing"]>): Float64Array {
    const trainSteps = schedule.sigmas.length;
    const sigmas = new Float64Array(steps + 1);
    if (spacing === "kdiffusion") {
        // DiscreteSchedule.get_sigmas(n): t = linspace(t_max, 0, n), sigma = t_to_sigma(t).
        const t = torchLinspace(trainSteps - 1, 0, steps);
        for (let i = 0; i < steps; i++)
            sigmas[i] = timestepToSigma(schedule, t[i]);
        return sigmas;
    }
    const mode = spacing === "config" ? schedule.config.timestepSpacing : spacing;
    // diffusers EulerDiscreteScheduler.set_timesteps.
    const timesteps = new Float64Array(steps);
    for (let k = 0; k < steps; k++) {
        if (mode === "linspace") {
            // np.linspace(0, T − 1, N)[::-1]: the last entry is exactly T − 1; for N = 1 it is [0].
            const index = steps - 1 - k;
            timesteps[k] = steps > 1 && index === steps - 1 ? trainSteps - 1 : index * ((trainSteps - 1) / (steps - 1 || 1));
        } else if (mode === "leading")
            timesteps[k] = (steps - 1 - k) * Math.floor(trainSteps / steps) + schedule.config.stepsOffset;
        else
            timesteps[k] = roundHalfEven(trainSteps - k * (trainSteps / steps)) - 1;
    }
    for (let k = 0; k < steps; k++)
        sigmas[k] = interpolate(schedule.sigmas, Math.min(Math.max(timesteps[k], 0), trainSteps - 1));
    return sigmas;
}

/** numpy `np.interp(t, arange(T), table)`: linear in sigma. */
function interpolate(table: Float64Array, t: number): number {
    const low = Math.floor(t);
    const high = Math.min(low + 1, table.length - 1);
    const w = t - low;
    return w === 0 ? table[low] : table[low] + w * (table[high] - table[low]);
}

function roundHalfEven(value: number): number {
    const floor = Math.floor(value);
    const diff = value - floor;
    if (diff !== 0.5)
        return Math.round(value);
    return floor % 2 === 0 ? floor : floor + 1;
}

function ddimPlan(steps: number, schedule: TrainingSchedule, variant: DdimVariant, eta: number, sNoise: number): SamplingPlan {
    const trainSteps = schedule.sigmas.length;
    const stride = Math.floor(trainSteps / steps);
    const list: number[] = [];
    if (variant === "a1111") {
        // A1111 sd_samplers_timesteps.get_timesteps: torch.clip(range(0, 1000, 1000 // steps) + 1, 0, 999).
        for (let t = 0; t < trainSteps; t += stride)
            list.push(Math.min(t + 1, trainSteps - 1));
    } else {
        // CompVis make_ddim_timesteps("uniform") + 1 / diffusers DDIM "leading" with steps_offset 1: exactly N entries.
        for (let k = 0; k < steps; k++)
            list.push(Math.min(k * stride + 1, trainSteps - 1));
    }
    const timesteps = Int32Array.from(list);
    const alphasCumprod = schedule.alphasCumprod;
    const alphas = Float64Array.from(list, (t) => alphasCumprod[t]);
    // A1111: alphas_cumprod[pad(timesteps[:-1], (1, 0))], i.e. ᾱ₀ before the first entry.
    const alphasPrev = Float64Array.from(list, (_, k) => alphasCumprod[k === 0 ? 0 : list[k - 1]]);
    const updates = variant === "a1111" ? list.length - 1 : list.length;
    const levels: number[] = [];
    for (let index = list.length - 1; index >= list.length - updates; index--)
        levels.push(schedule.sigmas[list[index]]);
    levels.push(updates === 0 ? schedule.sigmas[list[0]] : sigmaOfAlpha(alphasPrev[list.length - updates]));
    const sigmas = Float64Array.from(levels);
    return {
        sampler: "DDIM", steps, schedule, sigmas,
        ddim: {variant, timesteps, alphas, alphasPrev},
        eta, sNoise,
        noiseInterval: {sigmaMin: Math.min(...levels), sigmaMax: Math.max(...levels)},
        modelCalls: updates, stepCount: updates, noiseCalls: eta > 0 ? updates : 0
    };
}

function sigmaOfAlpha(alpha: number) {
    return Math.sqrt((1 - alpha) / alpha);
}
