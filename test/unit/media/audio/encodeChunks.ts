import type { AudioEncoder } from "../../../../src/media/audio/AudioEncoder.js";

/** Pushes the chunks through the encoder; returns every call's output (the last one is end()'s) and all bytes joined. */
export async function encodeChunks(encoder: AudioEncoder, chunks: Float32Array[]): Promise<{outputs: Uint8Array[]; bytes: Uint8Array}> {
    const outputs: Uint8Array[] = [];
    for (const chunk of chunks) outputs.push(await encoder.push(chunk));
    outputs.push(await encoder.end());
    const bytes = new Uint8Array(outputs.reduce((sum, output) => sum + output.length, 0));
    let offset = 0;
    for (const output of outputs) {
        bytes.set(output, offset);
        offset += output.length;
    }
    return {outputs, bytes};
}
