import { describe, expect, it } from "vitest";
import type { ImageJob } from "../../../src/capabilities/images/ImageEngine.js";
import { outputTokensOf, progressEvent, toImagesUsage } from "../../../src/capabilities/images/imagesResponses.js";

const job: ImageJob = {prompt: "p", negativePrompt: "", width: 512, height: 768, steps: 4, sampler: "Euler", guidanceScale: 0, seeds: [1, 2], previews: 0};

describe("imagesResponses", () => {
    it("output tokens are the latent positions of every image: (w/8) x (h/8) x n", () => {
        expect(outputTokensOf(job)).toBe(2 * 64 * 96);
        expect(toImagesUsage(9, job)).toEqual({input_tokens: 9, output_tokens: 12288, total_tokens: 12297, input_tokens_details: {text_tokens: 9, image_tokens: 0}});
    });

    it("a progress event extrapolates the remaining time from the mean step so far", () => {
        expect(progressEvent(1, 4, 250.4, 1700000000)).toEqual({
            type: "image_generation.progress", created_at: 1700000000, step: 1, steps: 4, progress: 0.25, elapsed_ms: 250, estimated_remaining_ms: 751
        });
        expect(progressEvent(4, 4, 1000, 0)).toMatchObject({progress: 1, estimated_remaining_ms: 0});
    });
});
