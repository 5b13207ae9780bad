import { ApiError } from "../../core/http/ApiError.js";
import type { ImageEngine, ImageJob } from "./ImageEngine.js";
import type { ImageSettings } from "./imagesManifest.js";
import type { ImageQuality, ImagesRequest, OutputFormat } from "./ImagesWire.js";
import { maxSeed } from "./imagesSchema.js";
import { samplerNames, type SamplerName } from "./samplers/samplerNames.js";

/** The spec's defaults, replaced per model by its manifest `defaults` (README "Images"). */
const specDefaults = {steps: 25, sampler: "DPM++ 2M Karras" as SamplerName, guidanceScale: 7.5};
/** Partial images per streamed image when the request names none (OpenAI's default is 0; the spec wants previews). */
const defaultPartialImages = 3;
/** Images in a MidJourney-style grid (2x2). */
const gridImages = 4;

/** Fields only Stable-Diffusion-style models take; a MidJourney-style model answers 400 naming them. */
const stableDiffusionOnlyFields = ["negative_prompt", "steps", "sampler", "seed", "guidance_scale"] as const;

export type ImagesJob = {
    job: ImageJob;
    /** MidJourney style: the four images become one 2x2 grid. */
    grid: boolean;
    stream: boolean;
    /** Partial images the client asked for (streaming only). */
    partialImages: number;
    responseFormat: "b64_json" | "url";
    outputFormat: OutputFormat;
    /** 0..100, the JPEG/WebP quality (PNG is lossless and ignores it). */
    outputCompression: number;
    /** As reported back (`standard`/`hd` become `medium`/`high`). */
    quality: ImageQuality;
    /** `WxH` of each image the client receives (a grid is twice the model's size each way). */
    size: string;
};

/** What toImageJob needs of the engine: its sizes only. */
export type ImageEngineInfo = Pick<ImageEngine, "id" | "nativeSize" | "sizeBounds">;

/**
 * A validated request as the engine's job, with every check that depends on the model: its
 * parameter set, its size bounds, and the precedence spec defaults < manifest `defaults` < request.
 * Pure apart from `randomSeed`, called when the request names no seed.
 */
export function toImageJob(request: ImagesRequest, settings: ImageSettings, info: ImageEngineInfo, randomSeed: () => number): ImagesJob {
    const grid = settings.parameterSet === "midjourney";
    if (grid)
        for (const field of stableDiffusionOnlyFields)
            if (request[field] != null)
                throw ApiError.invalidRequest(
                    `'${field}' is a Stable Diffusion parameter; the model '${info.id}' is MidJourney-style and takes only 'prompt', 'model' and 'stream' (and OpenAI's output options).`,
                    field, "unsupported_parameter");

    const stream = request.stream === true;
    const n = request.n ?? 1;
    if (grid && n !== 1)
        throw ApiError.invalidRequest(`Invalid value for 'n': ${n}. The MidJourney-style model '${info.id}' makes one 2x2 grid per request; 'n' must be 1.`, "n");
    if (stream && n > 1)
        throw ApiError.invalidRequest(`Invalid value for 'n': ${n}. Streamed generation makes one image: 'n' must be 1 when 'stream' is true.`, "n");
    if (request.background === "transparent")
        throw ApiError.invalidRequest("Invalid value for 'background': \"transparent\". This server's models make opaque images: use \"opaque\" or \"auto\".", "background");
    if (stream && request.response_format === "url")
        throw ApiError.invalidRequest("Invalid value for 'response_format': \"url\". Streamed images travel in the events as b64_json: leave 'response_format' out or use \"b64_json\".", "response_format");

    const sampler = toSampler(request.sampler ?? settings.defaults.sampler ?? specDefaults.sampler);
    const quality = toQuality(request.quality);
    const steps = request.steps ?? stepsFor(quality, settings.defaults.steps ?? specDefaults.steps);
    const {width, height} = grid ? gridTileSize(request.size ?? null, settings, info) : toSize(request.size ?? null, settings, info);
    const seed = request.seed ?? randomSeed();
    const count = grid ? gridImages : n;
    const partialImages = stream ? request.partial_images ?? defaultPartialImages : 0;

    return {
        job: {
            prompt: request.prompt,
            negativePrompt: request.negative_prompt ?? "",
            width, height, steps, sampler,
            guidanceScale: request.guidance_scale ?? settings.defaults.guidanceScale ?? specDefaults.guidanceScale,
            // Consecutive seeds for the images of one request, as AUTOMATIC1111's batches.
            seeds: Array.from({length: count}, (_, index) => (seed + index) % (maxSeed + 1)),
            // A preview at the last step would be the final image: at most one per step before it.
            previews: Math.min(partialImages, steps - 1)
        },
        grid, stream, partialImages,
        responseFormat: request.response_format ?? "b64_json",
        outputFormat: request.output_format ?? "png",
        outputCompression: request.output_compression ?? 100,
        quality,
        size: grid ? `${width * 2}x${height * 2}` : `${width}x${height}`
    };
}

/**
 * `quality` as a step count when `steps` is absent, relative to the model's default (`base`):
 * low = half, medium/auto = base, high = double, within 1..50.
 */
export function stepsFor(quality: ImageQuality, base: number): number {
    switch (quality) {
        case "low": return Math.max(1, Math.round(base / 2));
        case "high": return Math.min(50, base * 2);
        default: return base;
    }
}

function toQuality(quality: ImagesRequest["quality"]): ImageQuality {
    if (quality === "standard") return "medium";
    if (quality === "hd") return "high";
    // "auto" renders at the model's default steps, which is "medium": the response says the quality used.
    return quality == null || quality === "auto" ? "medium" : quality;
}

function toSampler(sampler: string): SamplerName {
    if (!(samplerNames as readonly string[]).includes(sampler))
        throw ApiError.invalidRequest(
            `Invalid value for 'sampler': ${JSON.stringify(sampler)}. Supported samplers are: ${samplerNames.map((name) => JSON.stringify(name)).join(", ")}.`,
            "sampler");
    return sampler as SamplerName;
}

/** `WxH`, `auto` or absent (the manifest's default size, else the model's native size), within the engine's bounds. */
function toSize(size: string | null, settings: ImageSettings, info: ImageEngineInfo): {width: number, height: number} {
    if (size == null || size === "auto") {
        if (settings.defaults.size == null)
            return info.nativeSize;
        return parseSize(settings.defaults.size, info);
    }
    return parseSize(size, info);
}

function parseSize(size: string, info: ImageEngineInfo): {width: number, height: number} {
    const {min, max, multiple} = info.sizeBounds;
    const allowed = `each side a multiple of ${multiple} from ${min} to ${max} (e.g. "${info.nativeSize.width}x${info.nativeSize.height}"), or "auto"`;
    const match = /^([0-9]{1,5})x([0-9]{1,5})$/.exec(size);
    if (match == null)
        throw ApiError.invalidRequest(`Invalid value for 'size': ${JSON.stringify(size)}. Expected "WIDTHxHEIGHT", ${allowed}.`, "size");
    const [width, height] = [Number(match[1]), Number(match[2])];
    if ([width, height].some((side) => side < min || side > max || side % multiple !== 0))
        throw ApiError.invalidRequest(`Invalid value for 'size': ${JSON.stringify(size)}. The model '${info.id}' makes images with ${allowed}.`, "size");
    return {width, height};
}

/** A MidJourney-style model's tiles have the model's size; `size` may only name the grid's. */
function gridTileSize(size: string | null, settings: ImageSettings, info: ImageEngineInfo): {width: number, height: number} {
    const tile = toSize(null, settings, info);
    const gridSize = `${tile.width * 2}x${tile.height * 2}`;
    if (size != null && size !== "auto" && size !== gridSize)
        throw ApiError.invalidRequest(
            `Invalid value for 'size': ${JSON.stringify(size)}. The MidJourney-style model '${info.id}' makes one ${gridSize} grid of four ${tile.width}x${tile.height} images: leave 'size' out or use "auto" or "${gridSize}".`,
            "size");
    return tile;
}
