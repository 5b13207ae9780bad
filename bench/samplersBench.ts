/**
 * npm run bench:samplers — what the samplers themselves cost per step on a 512x512 latent (4x64x64 = 16384 numbers),
 * with an instant toy denoiser, so the figure is the overhead added to each UNet call: the arithmetic of every sampler,
 * plus drawing the initial latent and the noise sources. Medians of several runs.
 */
import { brownianTreeNoise } from "../src/capabilities/images/samplers/brownianTreeNoise.js";
import { gaussianNoise } from "../src/capabilities/images/samplers/gaussianNoise.js";
import { initialLatent } from "../src/capabilities/images/samplers/initialLatent.js";
import { noiseSourceFor } from "../src/capabilities/images/samplers/noiseSourceFor.js";
import { parseSchedulerConfig } from "../src/capabilities/images/samplers/parseSchedulerConfig.js";
import { runSampler } from "../src/capabilities/images/samplers/runSampler.js";
import { samplerNames } from "../src/capabilities/images/samplers/samplerNames.js";
import { samplingPlan } from "../src/capabilities/images/samplers/samplingPlan.js";
import { trainingSchedule } from "../src/capabilities/images/samplers/trainingSchedule.js";

const length = 4 * 64 * 64;
const steps = 25;
const runs = 5;
const schedule = trainingSchedule(parseSchedulerConfig({beta_start: 0.00085, beta_end: 0.012, beta_schedule: "scaled_linear"}));
const denoiser = async (x: Float64Array, sigma: number) => x.map((value) => Math.tanh(value) / (1 + sigma * sigma));

function median(values: number[]) {
    const sorted = values.slice().sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
}

function time(action: () => unknown) {
    const start = performance.now();
    action();
    return performance.now() - start;
}

const rows: string[][] = [["what", "ms (median)"]];
rows.push(["gaussianNoise: initial latent (16384 normals)", median(Array.from({length: runs}, (_, i) => time(() => gaussianNoise(i).take(length))).map(String).map(Number)).toFixed(2)]);
rows.push(["brownianTreeNoise: one call (2 new points)", median(Array.from({length: runs}, (_, i) => {
    const source = brownianTreeNoise(i, schedule.sigmaMin, schedule.sigmaMax, length);
    return time(() => source(7.1, 3.3));
})).toFixed(2)]);
for (const name of samplerNames) {
    const plan = samplingPlan(name, steps, schedule);
    const perStep: number[] = [];
    for (let run = 0; run < runs; run++) {
        const xT = initialLatent(plan, gaussianNoise(run).take(length));
        const noise = noiseSourceFor(plan, run, length);
        const start = performance.now();
        await runSampler(plan, xT, denoiser, noise);
        perStep.push((performance.now() - start) / plan.stepCount);
    }
    rows.push([`${name}: per step, toy denoiser included (${plan.modelCalls} calls / ${plan.stepCount} steps)`, median(perStep).toFixed(2)]);
}
const width = Math.max(...rows.map((row) => row[0].length));
for (const [what, ms] of rows)
    console.log(`${what.padEnd(width)}  ${ms}`);
