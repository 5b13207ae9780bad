import libFlacFactory from "libflacjs";

export type LibFlac = ReturnType<typeof libFlacFactory>;

let loading: Promise<LibFlac> | undefined;

/**
 * libFLAC compiled to JavaScript (asm.js, "min" build), initialised once per process.
 * The WebAssembly build is not used: its loader fetch()es the .wasm by file path, which Node 20 rejects.
 */
export function loadLibFlac(): Promise<LibFlac> {
    loading ??= new Promise(resolve => {
        const flac = libFlacFactory("min");
        if (flac.isReady()) resolve(flac);
        else flac.on("ready", () => resolve(flac));
    });
    return loading;
}
