import { describe, expect, it } from "vitest";
import { float16 } from "../../src/runtimes/onnx/float16.js";

describe("float16", () => {
    it("converts known values both ways", () => {
        const cases: [number, number][] = [
            [0, 0x0000], [-0, 0x8000], [1, 0x3c00], [-2, 0xc000], [0.5, 0x3800], [65504, 0x7bff], [1 / 3, 0x3555],
            [6.103515625e-5, 0x0400], [5.960464477539063e-8, 0x0001], [Infinity, 0x7c00], [-Infinity, 0xfc00],
            [1e6, 0x7c00], [1e-9, 0x0000], [0.1, 0x2e66]
        ];
        expect(Array.from(float16.fromFloat32(cases.map(([value]) => value)))).toEqual(cases.map(([, bits]) => bits));
        expect(float16.toFloat32(Uint16Array.of(0x3c00, 0xc000, 0x7bff, 0x0001, 0x0400))).toEqual(Float32Array.of(1, -2, 65504, 5.960464477539063e-8, 6.103515625e-5));
        expect(Number.isNaN(float16.toFloat32(float16.fromFloat32([NaN]))[0])).toBe(true);
    });

    it("rounds to nearest, ties to even, and round-trips every half exactly", () => {
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1); 1 + 3*2^-11 ties up to 1 + 2^-9.
        expect(Array.from(float16.fromFloat32([1 + 2 ** -11, 1 + 3 * 2 ** -11, 1 + 2 ** -11 + 2 ** -20]))).toEqual([0x3c00, 0x3c02, 0x3c01]);
        const all = Uint16Array.from({length: 65536}, (_, i) => i).filter((bits) => (bits & 0x7c00) !== 0x7c00 || (bits & 0x3ff) === 0);
        expect(Array.from(float16.fromFloat32(float16.toFloat32(all)))).toEqual(Array.from(all));
    });
});
