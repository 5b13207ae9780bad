/** What a loaded GPU backend reports about its devices. */
export type GpuDevices = {
    names: readonly string[];
    /** Bytes of VRAM the backend sees in all (0 for a software device). */
    vramTotal: number;
};

/** Device names of software rasterisers: a Vulkan loader with Mesa's llvmpipe (lavapipe) is a CPU in disguise. */
const softwareDevice = /llvmpipe|lavapipe|softpipe|swiftshader|software/i;

/**
 * Whether a GPU backend that `gpu: "auto"` loaded is worth keeping: at least one device that is not a
 * software rasteriser, and some VRAM. (Debian's mesa-vulkan-drivers, pulled in by ffmpeg and present on
 * most Linux desktops, gives node-llama-cpp's Vulkan binary a llvmpipe device with 0 bytes of VRAM on
 * machines without a GPU: running there is slower than the CPU backend and changes outputs.)
 */
export function isUsableGpu(devices: GpuDevices): boolean {
    return devices.vramTotal > 0 && devices.names.some((name) => !softwareDevice.test(name));
}
