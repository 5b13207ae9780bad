import { describe, expect, it } from "vitest";
import { Mt19937 } from "../../src/capabilities/images/samplers/Mt19937.js";
import { torchCpuRandn } from "../../src/capabilities/images/samplers/torchCpuRandn.js";

describe("torch CPU randn compatibility (A1111 'RNG source: CPU')", () => {
    it("mt19937 matches the reference outputs (seed 5489, and seed 0 as torch.manual_seed(0) / numpy RandomState(0))", () => {
        expect(new Mt19937(5489).nextUint32()).toBe(3499211612);
        const generator = new Mt19937(0);
        expect([generator.nextUint32(), generator.nextUint32(), generator.nextUint32()]).toEqual([2357136044, 2546248239, 3071714933]);
        // The 10000th output of the default seed (C++11 std::mt19937 requirement).
        const standard = new Mt19937(5489);
        for (let i = 0; i < 9999; i++)
            standard.nextUint32();
        expect(standard.nextUint32()).toBe(4123659995);
    });

    it("torch.manual_seed(0); torch.randn(4, 4) as torch prints it", () => {
        const values = torchCpuRandn(0).randn(16);
        const printed = [-1.1258, -1.1524, -0.2506, -0.4339, 0.8487, 0.6920, -0.3160, -2.1152,
            0.3223, -1.2633, 0.3500, 0.3081, 0.1198, 1.2377, 1.1168, -0.2473];
        values.forEach((value, i) => expect(value).toBeCloseTo(printed[i], 4));
        expect(values.every((value) => Math.fround(value) === value)).toBe(true);
    });

    it("a count that is not a multiple of 16 redraws the last 16 (torch normal_fill), and calls continue the stream", () => {
        // Reference: the same algorithm in numpy float32 on MT19937 seeded 1234.
        const expected = [-0.1117185652256012, -0.49659010767936707, 0.16307370364665985, -0.8816878199577332,
            0.28909721970558167, 0.4898708462715149, -0.3852749466896057, -0.7120343446731567, 0.6369125843048096,
            -0.7140800952911377, -1.0831243991851807, -0.5547242760658264, -1.3248120546340942, 0.6969805359840393,
            -0.6630536913871765, 1.2157570123672485, -2.5273351669311523, 1.477784276008606, -0.16962362825870514,
            -0.9918573498725891];
        const values = torchCpuRandn(1234).randn(20);
        values.forEach((value, i) => expect(Math.abs(value - expected[i])).toBeLessThanOrEqual(2e-7 * Math.max(1, Math.abs(expected[i]))));
        const stream = torchCpuRandn(7);
        const first = stream.randn(32);
        const second = stream.randn(32);
        expect(Array.from(second)).not.toEqual(Array.from(first));
        // Blocks of 16 consume uniforms in order, so two 32s equal one 64, but 20 + 20 != 40 (the tail is redrawn).
        expect(Array.from(torchCpuRandn(7).randn(64))).toEqual([...first, ...second]);
        const odd = torchCpuRandn(7);
        expect(Array.from(torchCpuRandn(7).randn(40))).not.toEqual([...odd.randn(20), ...odd.randn(20)]);
        expect(() => torchCpuRandn(0).randn(8)).toThrow(/at least 16/);
    });
});
