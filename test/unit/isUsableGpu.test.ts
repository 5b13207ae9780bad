import { describe, expect, it } from "vitest";
import { isUsableGpu } from "../../src/runtimes/llama/isUsableGpu.js";
import { loadConfig } from "../../src/config.js";

describe("gpu auto keeps a GPU backend only with a usable device", () => {
    it.each([
        ["Mesa's software Vulkan device, no VRAM (mesa-vulkan-drivers on a machine without a GPU)", ["llvmpipe (LLVM 15.0.6, 256 bits)"], 0, false],
        ["lavapipe with some reported memory", ["lavapipe"], 2 ** 30, false],
        ["SwiftShader", ["SwiftShader Device (Subzero)"], 2 ** 30, false],
        ["no device at all", [], 0, false],
        ["a real GPU with no VRAM reported", ["NVIDIA GeForce RTX 4090"], 0, false],
        ["a real GPU", ["NVIDIA GeForce RTX 4090"], 24 * 2 ** 30, true],
        ["a real GPU beside a software device", ["llvmpipe (LLVM 15.0.6, 256 bits)", "AMD Radeon RX 7900 XTX (RADV NAVI31)"], 24 * 2 ** 30, true],
        ["Apple silicon (unified memory)", ["Apple M3 Max"], 48 * 2 ** 30, true]
    ])("%s", (_, names, vramTotal, usable) => {
        expect(isUsableGpu({names, vramTotal})).toBe(usable);
    });

    it("--gpu and --gpu-layers are read from flags and the environment", () => {
        expect(loadConfig([], {})).toMatchObject({gpu: "auto", gpuLayers: "auto"});
        expect(loadConfig(["--gpu", "off", "--gpu-layers", "max"], {})).toMatchObject({gpu: "off", gpuLayers: "max"});
        expect(loadConfig([], {GPU: "vulkan", GPU_LAYERS: "12"})).toMatchObject({gpu: "vulkan", gpuLayers: 12});
        expect(() => loadConfig(["--gpu", "rocm"], {})).toThrow("gpu");
        expect(() => loadConfig(["--gpu-layers", "-1"], {})).toThrow("gpu-layers");
    });
});
