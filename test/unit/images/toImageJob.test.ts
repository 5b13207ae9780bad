import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/core/http/ApiError.js";
import { compileRequestValidator } from "../../../src/core/validation/compileRequestValidator.js";
import type { ImageSettings } from "../../../src/capabilities/images/imagesManifest.js";
import { imagesSchema } from "../../../src/capabilities/images/imagesSchema.js";
import type { ImagesRequest } from "../../../src/capabilities/images/ImagesWire.js";
import { samplerNames } from "../../../src/capabilities/images/samplers/samplerNames.js";
import { stepsFor, toImageJob } from "../../../src/capabilities/images/toImageJob.js";

const validate = compileRequestValidator<ImagesRequest>(imagesSchema);
const info = {id: "sd", nativeSize: {width: 512, height: 512}, sizeBounds: {min: 256, max: 1024, multiple: 8}};
const sd: ImageSettings = {parameterSet: "stable-diffusion", defaults: {steps: null, sampler: null, size: null, guidanceScale: null}, previewDecoder: null};
const mj: ImageSettings = {...sd, parameterSet: "midjourney", defaults: {steps: 4, sampler: "Euler", size: "256x256", guidanceScale: 0}};
const job = (body: Record<string, unknown>, settings = sd) => toImageJob(validate({model: "sd", prompt: "a cat", ...body}), settings, info, () => 1234);

/** The 400 a request gets, from the schema or from toImageJob. */
function errorOf(body: Record<string, unknown>, settings = sd): ApiError {
    try {
        job(body, settings);
    } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        expect((error as ApiError).status).toBe(400);
        return error as ApiError;
    }
    throw new Error(`accepted: ${JSON.stringify(body)}`);
}

describe("toImageJob: the Stable Diffusion parameter set", () => {
    it("applies the spec's defaults: 25 steps, DPM++ 2M Karras, n 1, native size, random seed reported, png, b64_json", () => {
        expect(job({})).toEqual({
            job: {prompt: "a cat", negativePrompt: "", width: 512, height: 512, steps: 25, sampler: "DPM++ 2M Karras", guidanceScale: 7.5, seeds: [1234], previews: 0},
            grid: false, stream: false, partialImages: 0, responseFormat: "b64_json", outputFormat: "png", outputCompression: 100, quality: "medium", size: "512x512"
        });
    });

    it("takes every field of the request, n images get consecutive seeds wrapping at 2^32", () => {
        const images = job({negative_prompt: "dog", steps: 7, sampler: "Euler a", n: 3, seed: 2 ** 32 - 2, size: "768x256", guidance_scale: 3,
            response_format: "url", output_format: "webp", output_compression: 40, quality: "high", style: "vivid", moderation: "low", user: "u", background: "opaque"});
        expect(images.job).toEqual({prompt: "a cat", negativePrompt: "dog", width: 768, height: 256, steps: 7, sampler: "Euler a", guidanceScale: 3,
            seeds: [2 ** 32 - 2, 2 ** 32 - 1, 0], previews: 0});
        expect(images).toMatchObject({responseFormat: "url", outputFormat: "webp", outputCompression: 40, quality: "high", size: "768x256"});
    });

    it("precedence: spec defaults < manifest defaults < request", () => {
        const turbo: ImageSettings = {...sd, defaults: {steps: 2, sampler: "Euler", size: "256x256", guidanceScale: 0}};
        expect(job({}, turbo).job).toMatchObject({steps: 2, sampler: "Euler", width: 256, height: 256, guidanceScale: 0});
        expect(job({steps: 9, sampler: "DDIM", size: "512x512", guidance_scale: 5}, turbo).job)
            .toMatchObject({steps: 9, sampler: "DDIM", width: 512, height: 512, guidanceScale: 5});
        expect(job({size: "auto"}, turbo).job).toMatchObject({width: 256, height: 256});
    });

    it("every sampler name is accepted", () => {
        for (const sampler of samplerNames)
            expect(job({sampler}).job.sampler).toBe(sampler);
    });

    it("quality maps to steps only when steps is absent: low half, medium/auto/standard the default, high/hd double (at most 50)", () => {
        expect(["low", "medium", "auto", "standard", "high", "hd"].map((quality) => job({quality}).job.steps)).toEqual([13, 25, 25, 25, 50, 50]);
        expect(job({quality: "low", steps: 30}).job.steps).toBe(30);
        expect(job({quality: "hd"}).quality).toBe("high");
        expect([1, 2, 4, 30].map((base) => [stepsFor("low", base), stepsFor("high", base)])).toEqual([[1, 2], [1, 4], [2, 8], [15, 50]]);
    });

    it("streaming: 3 partial images by default, at most one per step before the last", () => {
        expect(job({stream: true}).job.previews).toBe(3);
        expect(job({stream: true}).partialImages).toBe(3);
        expect(job({stream: true, partial_images: 1}).job.previews).toBe(1);
        expect(job({stream: true, steps: 2}).job.previews).toBe(1);
        expect(job({stream: true, steps: 1}).job.previews).toBe(0);
        expect(job({partial_images: 2}).job.previews).toBe(0);
    });

    it("OpenAI's sizes work when the model's bounds allow them", () => {
        expect(job({size: "1024x1024"}).size).toBe("1024x1024");
    });
});

describe("toImageJob: every bound one past its limit is a 400 naming the field", () => {
    it.each([
        [{steps: 0}, "steps"], [{steps: 51}, "steps"], [{steps: 2.5}, "steps"],
        [{n: 0}, "n"], [{n: 5}, "n"], [{n: 2, stream: true}, "n"],
        [{seed: -1}, "seed"], [{seed: 2 ** 32}, "seed"],
        [{guidance_scale: -0.1}, "guidance_scale"], [{guidance_scale: 30.5}, "guidance_scale"],
        [{output_compression: 101}, "output_compression"], [{output_compression: -1}, "output_compression"],
        [{partial_images: 4}, "partial_images"], [{partial_images: -1}, "partial_images"],
        [{output_format: "gif"}, "output_format"], [{response_format: "file"}, "response_format"],
        [{quality: "ultra"}, "quality"], [{background: "transparent"}, "background"],
        [{stream: true, response_format: "url"}, "response_format"],
        [{prompt: ""}, "prompt"], [{prompt: undefined}, "prompt"], [{model: undefined}, "model"],
        [{size: "512"}, "size"], [{size: "512x513"}, "size"], [{size: "248x512"}, "size"], [{size: "512x1032"}, "size"],
        [{size: "1536x1024"}, "size"], [{size: "big"}, "size"], [{size: "-512x512"}, "size"]
    ])("%j -> %s", (body, param) => {
        expect(errorOf(body).param).toBe(param);
    });

    it("an unknown sampler lists the six names", () => {
        const error = errorOf({sampler: "LMS"});
        expect(error.param).toBe("sampler");
        for (const name of samplerNames)
            expect(error.message).toContain(`"${name}"`);
    });

    it("an out-of-bounds size says the allowed range", () => {
        expect(errorOf({size: "1536x1024"}).message).toContain("each side a multiple of 8 from 256 to 1024");
    });
});

describe("toImageJob: the MidJourney-style parameter set", () => {
    it("one request = four seeds through one engine call, tiles of the manifest's size, one grid twice as large", () => {
        const images = job({stream: true}, mj);
        expect(images.grid).toBe(true);
        expect(images.job).toMatchObject({seeds: [1234, 1235, 1236, 1237], width: 256, height: 256, steps: 4, sampler: "Euler", guidanceScale: 0, previews: 3});
        expect(images.size).toBe("512x512");
        expect(job({size: "512x512"}, mj).size).toBe("512x512");
    });

    it.each(["negative_prompt", "steps", "sampler", "seed", "guidance_scale"])("a Stable Diffusion field (%s) is a 400 naming it", (field) => {
        const value = {negative_prompt: "x", steps: 4, sampler: "Euler", seed: 1, guidance_scale: 1}[field];
        const error = errorOf({[field]: value}, mj);
        expect(error.param).toBe(field);
        expect(error.code).toBe("unsupported_parameter");
    });

    it("n other than 1 and a size other than the grid's are 400s naming them", () => {
        expect(errorOf({n: 2}, mj).param).toBe("n");
        expect(errorOf({size: "256x256"}, mj).param).toBe("size");
    });
});
