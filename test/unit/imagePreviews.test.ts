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

describe("padLatents", () => {
    it("pads rows of [c, h, w] to multiples of 8 by repeating edges, and crops back exactly", async () => {
        const {cropLatents, padLatents} = await import("../../src/capabilities/images/onnx/padLatents.js");
        const rows = 2, channels = 3, height = 9, width = 10;
        const data = Float32Array.from({length: rows * channels * height * width}, (_, i) => i);
        const padded = padLatents(data, rows, channels, height, width);
        expect(padded.length).toBe(rows * channels * 16 * 16);
        // Plane 4 (row 1, channel 1), padded pixel (y 15, x 12) repeats source pixel (8, 9).
        expect(padded[4 * 256 + 15 * 16 + 12]).toBe(data[4 * 90 + 8 * 10 + 9]);
        expect(padded[4 * 256 + 3 * 16 + 5]).toBe(data[4 * 90 + 3 * 10 + 5]);
        expect(cropLatents(padded, rows, channels, height, width)).toEqual(data);
        const aligned = new Float32Array(channels * 8 * 16);
        expect(padLatents(aligned, 1, channels, 8, 16)).toBe(aligned);
    });
});
