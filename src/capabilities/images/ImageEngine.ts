import type { Engine } from "../../core/engines/Engine.js";
import type { SamplerName } from "./samplers/samplerNames.js";

/** One generation as the engine sees it (the API layer has applied defaults and checked bounds). */
export type ImageJob = {
    prompt: string;
    /** "" = none (the unconditional half of classifier-free guidance uses the empty prompt). */
    negativePrompt: string;
    /** Multiples of 8 within the engine's `sizeBounds`. */
    width: number;
    height: number;
    steps: number;
    sampler: SamplerName;
    /** Classifier-free guidance scale; <= 1 = no guidance (one UNet pass per step, negative prompt unused). */
    guidanceScale: number;
    /** One seed per image (n = seeds.length, 1..4); same seed and job = the same pixels. */
    seeds: number[];
    /** Partial images wanted per image (0..3), spread evenly over the steps. */
    previews: number;
};

export type ImageStepProgress = {
    type: "step";
    /** 1-based, of `steps`. */
    step: number;
    steps: number;
    elapsedMs: number;
};

export type ImagePreview = {
    type: "preview";
    /** Which image of the job (0..n-1). */
    image: number;
    /** 0-based, < job.previews. */
    partialIndex: number;
    step: number;
    /** RGB, 8 bits, row-major, no alpha; may be smaller than the final image (it is scaled up by the API layer as it likes). */
    rgb: Uint8Array;
    width: number;
    height: number;
};

export type ImageProgress = ImageStepProgress | ImagePreview;

export type GeneratedImage = {
    seed: number;
    /** RGB, 8 bits, row-major, no alpha, width*height*3 bytes. */
    rgb: Uint8Array;
    width: number;
    height: number;
};

export type ImageResult = {
    images: GeneratedImage[];
    /** CLIP tokens of the prompt plus the negative prompt (after truncation to the window). */
    inputTokens: number;
    /** Whether the prompt (or negative prompt) was longer than the text encoder's window and was truncated. */
    truncated: boolean;
};

export type GenerateOptions = {
    /** Aborted when the client goes away or the server stops: the generation stops at the next step and the call rejects with the signal's reason. */
    signal: AbortSignal;
    onProgress?(progress: ImageProgress): void;
};

/** A loaded text-to-image pipeline. */
export interface ImageEngine extends Engine {
    readonly id: string;
    /** The size the model was trained at (UNet sample size x VAE scale factor). */
    readonly nativeSize: {width: number, height: number};
    /** Accepted sizes: each side a multiple of `multiple` within min..max. */
    readonly sizeBounds: {min: number, max: number, multiple: number};
    /** Tokens the text encoder sees (77 for CLIP). */
    readonly maxPromptTokens: number;
    generate(job: ImageJob, options: GenerateOptions): Promise<ImageResult>;
}
