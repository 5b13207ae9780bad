import { describe, expect, it } from "vitest";
import { latentPreview, toByte } from "../../src/capabilities/images/onnx/latentPreview.js";
import { previewSteps } from "../../src/capabilities/images/onnx/previewSteps.js";

describe("image previews", () => {
    it("spreads partial images evenly over the steps", () => {
        expect(previewSteps(3, 25)).toEqual([7, 13, 19]);
        expect(previewSteps(1, 4)).toEqual([2]);
        expect(previewSteps(2, 1)).toEqual([1, 1]);
        expect(previewSteps(0, 10)).toEqual([]);
    });

    it("projects latents to RGB with A1111's cheap approximation, one pixel per latent pixel", () => {
        // 1x2 latent: pixel 0 all channels 0 (mid grey), pixel 1 channel 0 = 1 -> rgb (0.298, 0.207, 0.208).
        const rgb = latentPreview(Float64Array.of(0, 1, 0, 0, 0, 0, 0, 0), 4, 1, 2);
        expect(Array.from(rgb)).toEqual([128, 128, 128, toByte(0.298), toByte(0.207), toByte(0.208)]);
        expect([toByte(-1), toByte(1), toByte(-5), toByte(5)]).toEqual([0, 255, 0, 255]);
    });
});
