import type { TaskContext } from "../../../core/workers/WorkerTask.js";
import { OnnxSession } from "../../../runtimes/onnx/OnnxSession.js";
import type { GeneratedImage, ImageJob, ImagePreview, ImageProgress, ImageResult, ImageStepProgress } from "../ImageEngine.js";
import { compVisDenoiser } from "../samplers/compVisDenoiser.js";
import { gaussianNoise } from "../samplers/gaussianNoise.js";
import { initialLatent } from "../samplers/initialLatent.js";
import type { NoiseSource } from "../samplers/NoiseSource.js";
import { noiseSourceFor } from "../samplers/noiseSourceFor.js";
import { runSampler } from "../samplers/runSampler.js";
import { samplingPlan } from "../samplers/samplingPlan.js";
import { encodePrompt } from "./encodePrompt.js";
import { cropLatents, padLatents, paddedSide } from "./padLatents.js";
import { latentPreview, planarToRgb } from "./latentPreview.js";
import type { SdPipeline } from "./loadSdPipeline.js";
import { previewSteps } from "./previewSteps.js";

/**
 * One text-to-image job in a worker: text encoding once; the n images' latents side by side in one float64
 * array run through one sampler (every sampler is elementwise over the latent with scalar coefficients, so this
 * is exactly n separate runs, each with its own seed's noise), each model call being ONE batched UNet run of
 * [unconditional x n, conditional x n] (only the conditional half when guidance <= 1); a step message after
 * every step, previews at the planned steps, the cancel flag checked before every UNet call and after every step;
 * then the VAE decoder one image at a time (bounded memory).
 */
export async function generateImages(pipeline: SdPipeline, job: ImageJob, context: TaskContext<ImageProgress>, options: {maxUnetBatch?: number | null} = {}): Promise<ImageResult> {
    const started = performance.now();
    const {describe, io} = pipeline;
    const scale = describe.vaeScaleFactor;
    if (job.width % scale !== 0 || job.height % scale !== 0)
        throw new Error(`The size ${job.width}x${job.height} is not a multiple of ${scale}.`);
    const latentWidth = job.width / scale;
    const latentHeight = job.height / scale;
    const channels = describe.latentChannels;
    const perImage = channels * latentHeight * latentWidth;
    const count = job.seeds.length;
    context.throwIfCancelled();

    // LCM-style UNets take the guidance scale as an input embedding instead of a second, unconditional pass.
    const guided = job.guidanceScale > 1 && io.timestepCond == null;
    const prompt = encodePrompt(pipeline, job.prompt);
    const negative = encodePrompt(pipeline, job.negativePrompt);
    const texts = await encodeTexts(pipeline, guided ? [negative.ids, prompt.ids] : [prompt.ids]);
    const textLength = texts[0].length;
    const conditioning = new Float32Array(textLength * count * texts.length);
    texts.forEach((text, half) => {
        for (let image = 0; image < count; image++)
            conditioning.set(text, (half * count + image) * textLength);
    });
    const rows = count * texts.length;
    const textDims = [describe.textWindow, textLength / describe.textWindow];

    const plan = samplingPlan(job.sampler, job.steps, pipeline.schedule, {
        // Distilled models (SD-Turbo) are trained for trailing timesteps; otherwise A1111's k-diffusion sigmas.
        spacing: pipeline.scheduler.timestepSpacing === "trailing" ? "trailing" : "kdiffusion"
    });
    const unit = new Float64Array(perImage * count);
    job.seeds.forEach((seed, image) => unit.set(gaussianNoise(seed, 0).take(perImage), image * perImage));
    const sources = job.seeds.map((seed) => noiseSourceFor(plan, seed, perImage));
    const noise: NoiseSource = (sigma, sigmaNext) => {
        const joined = new Float64Array(perImage * count);
        sources.forEach((source, image) => joined.set(source(sigma, sigmaNext), image * perImage));
        return joined;
    };

    const timestepIsInteger = io.timestep.type === "int64" || io.timestep.type === "int32";
    const guidanceEmbedding = io.timestepCond != null ? lcmGuidanceEmbedding(job.guidanceScale - 1, Number(io.timestepCond.shape[1]) || 256) : null;
    const network = async (scaledX: Float64Array, t: number): Promise<Float64Array> => {
        context.throwIfCancelled();
        const sample = new Float32Array(perImage * rows);
        for (let half = 0; half < texts.length; half++)
            for (let j = 0; j < scaledX.length; j++)
                sample[half * scaledX.length + j] = scaledX[j];
        const output = await runUnet(pipeline, {
            sample, conditioning, rows, t, guidanceEmbedding, maxRows: options.maxUnetBatch ?? null,
            sampleDims: [channels, latentHeight, latentWidth], textDims
        });
        const eps = new Float64Array(perImage * count);
        if (!guided) {
            for (let j = 0; j < eps.length; j++)
                eps[j] = output[j];
            return eps;
        }
        const offset = perImage * count;
        for (let j = 0; j < eps.length; j++)
            eps[j] = output[j] + job.guidanceScale * (output[offset + j] - output[j]);
        return eps;
    };
    const denoiser = compVisDenoiser(network, pipeline.schedule, {predictionType: pipeline.scheduler.predictionType, quantize: timestepIsInteger});

    const previewAt = previewSteps(job.previews, plan.stepCount);
    const steps = plan.stepCount;
    const latents = await runSampler(plan, initialLatent(plan, unit), denoiser, noise, async (i, _x, denoised) => {
        context.throwIfCancelled();
        const step = i + 1;
        const progress: ImageStepProgress = {type: "step", step, steps, elapsedMs: performance.now() - started};
        context.progress(progress);
        for (let partialIndex = 0; partialIndex < previewAt.length; partialIndex++) {
            if (previewAt[partialIndex] !== step)
                continue;
            for (let image = 0; image < count; image++) {
                const preview = await renderPreview(pipeline, denoised.subarray(image * perImage, (image + 1) * perImage), [channels, latentHeight, latentWidth]);
                const message: ImagePreview = {type: "preview", image, partialIndex, step, ...preview};
                context.progress(message, [preview.rgb.buffer as ArrayBuffer]);
            }
        }
    });

    const images: GeneratedImage[] = [];
    for (let image = 0; image < count; image++) {
        context.throwIfCancelled();
        const latent = latents.subarray(image * perImage, (image + 1) * perImage).map((value) => value / describe.scalingFactor);
        const decoded = await decode(pipeline, pipeline.vaeDecoder, latent, [channels, latentHeight, latentWidth]);
        images.push({seed: job.seeds[image], ...decoded});
    }
    const negativeTokens = guided && job.negativePrompt !== "" ? negative.tokens : 0;
    return {images, inputTokens: prompt.tokens + negativeTokens, truncated: prompt.truncated || (negativeTokens > 0 && negative.truncated)};
}

/** Hidden states of each 77-token row, one text-encoder call (or one per row when the export fixes batch 1). */
async function encodeTexts(pipeline: SdPipeline, rows: number[][]): Promise<Float32Array[]> {
    const {textEncoder, io} = pipeline;
    const window = pipeline.describe.textWindow;
    const batch = pipeline.textBatch ?? rows.length;
    const out: Float32Array[] = [];
    for (let start = 0; start < rows.length; start += batch) {
        const chunk = rows.slice(start, start + batch);
        while (chunk.length < batch)
            chunk.push(chunk[0]);
        const feeds: Record<string, ReturnType<OnnxSession["tensor"]>> = {
            [io.inputIds.name]: textEncoder.tensor(io.inputIds, chunk.flat(), [chunk.length, window])
        };
        const mask = textEncoder.inputs.get("attention_mask");
        if (mask != null)
            feeds[mask.name] = textEncoder.tensor(mask, new Array<number>(chunk.length * window).fill(1), [chunk.length, window]);
        const hidden = OnnxSession.floats((await textEncoder.run(feeds))[io.hiddenStates]);
        const size = hidden.length / chunk.length;
        for (let row = 0; row < Math.min(batch, rows.length - start); row++)
            out.push(hidden.slice(row * size, (row + 1) * size));
    }
    return out;
}

type UnetCall = {
    sample: Float32Array;
    conditioning: Float32Array;
    rows: number;
    t: number;
    guidanceEmbedding: Float32Array | null;
    /** Rows per run at most; null = all. */
    maxRows: number | null;
    sampleDims: number[];
    textDims: number[];
};

/**
 * One UNet run over all rows; in chunks when the export fixes its batch size (the last chunk padded with copies)
 * or when the engine options bound the rows per run (`maxUnetBatch`, to bound memory). Rows are independent, so
 * chunking never changes a result. Latents are padded to multiples of 8 when needed (see padLatents).
 */
async function runUnet(pipeline: SdPipeline, call: UnetCall): Promise<Float32Array> {
    const {unet, io} = pipeline;
    const fixed = pipeline.unetBatch;
    const chunkRows = fixed ?? Math.min(call.rows, call.maxRows ?? call.rows);
    const sampleSize = call.sample.length / call.rows;
    const textSize = call.conditioning.length / call.rows;
    const out = new Float32Array(call.sample.length);
    // A fixed-size export gets its own size (the engine allows only that); a dynamic one multiples of 8.
    const [channels, height, width] = call.sampleDims;
    const padded = pipeline.describe.fixedSize ? false : paddedSide(height) !== height || paddedSide(width) !== width;
    const unetHeight = padded ? paddedSide(height) : height;
    const unetWidth = padded ? paddedSide(width) : width;
    for (let start = 0; start < call.rows; start += chunkRows) {
        const take = Math.min(chunkRows, call.rows - start);
        const batch = fixed ?? take;
        const rowsOf = (data: Float32Array, size: number) => {
            if (batch === call.rows)
                return data;
            const chunk = new Float32Array(size * batch);
            for (let row = 0; row < batch; row++) {
                const source = start + Math.min(row, take - 1);
                chunk.set(data.subarray(source * size, (source + 1) * size), row * size);
            }
            return chunk;
        };
        const sample = rowsOf(call.sample, sampleSize);
        const timestepShape = io.timestep.shape;
        const timestepDims = timestepShape.length === 0 ? [] : timestepShape[0] === 1 ? [1] : [batch];
        const feeds: Record<string, ReturnType<OnnxSession["tensor"]>> = {
            [io.sample.name]: unet.tensor(io.sample, padded ? padLatents(sample, batch, channels, height, width) : sample, [batch, channels, unetHeight, unetWidth]),
            [io.timestep.name]: unet.tensor(io.timestep, new Array<number>(timestepDims.length === 0 ? 1 : timestepDims[0]).fill(call.t), timestepDims),
            [io.encoderHiddenStates.name]: unet.tensor(io.encoderHiddenStates, rowsOf(call.conditioning, textSize), [batch, ...call.textDims])
        };
        if (io.timestepCond != null && call.guidanceEmbedding != null) {
            const embedding = new Float32Array(call.guidanceEmbedding.length * batch);
            for (let row = 0; row < batch; row++)
                embedding.set(call.guidanceEmbedding, row * call.guidanceEmbedding.length);
            feeds[io.timestepCond.name] = unet.tensor(io.timestepCond, embedding, [batch, call.guidanceEmbedding.length]);
        }
        const result = OnnxSession.floats((await unet.run(feeds))[io.unetOutput]);
        const cropped = padded ? cropLatents(result, batch, channels, height, width) : result;
        out.set(cropped.subarray(0, take * sampleSize), start * sampleSize);
    }
    return out;
}

/** A decoder run on one latent [channels, h, w] -> RGB bytes at the decoder's output size. */
async function decode(pipeline: SdPipeline, session: OnnxSession, latent: ArrayLike<number>, dims: number[]): Promise<{rgb: Uint8Array, width: number, height: number}> {
    const input = session === pipeline.vaeDecoder ? pipeline.io.latentSample : session.input("latent_sample", [...session.inputs.keys()][0]);
    const outputName = session === pipeline.vaeDecoder ? pipeline.io.vaeOutput : [...session.outputs.keys()][0];
    const output = (await session.run({[input.name]: session.tensor(input, latent, [1, ...dims])}))[outputName];
    const [, , height, width] = output.dims;
    return {rgb: planarToRgb(OnnxSession.floats(output), height, width), width, height};
}

/** The preview decoder when the manifest names one (fed the sampler-space latent, as TAESD expects), else the projection. */
async function renderPreview(pipeline: SdPipeline, denoised: Float64Array, dims: number[]): Promise<{rgb: Uint8Array, width: number, height: number}> {
    if (pipeline.previewDecoder != null)
        return decode(pipeline, pipeline.previewDecoder, denoised, dims);
    const [channels, height, width] = dims;
    return {rgb: latentPreview(denoised, channels, height, width), width, height};
}

/** diffusers `get_guidance_scale_embedding(w, embedding_dim)` (LCM): sin/cos of w·1000 at log-spaced frequencies. */
function lcmGuidanceEmbedding(w: number, dimension: number): Float32Array {
    const half = Math.floor(dimension / 2);
    const out = new Float32Array(dimension);
    const step = Math.log(10000) / (half - 1);
    for (let k = 0; k < half; k++) {
        const angle = w * 1000 * Math.exp(-step * k);
        out[k] = Math.sin(angle);
        out[half + k] = Math.cos(angle);
    }
    return out;
}
