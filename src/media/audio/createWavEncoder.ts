import type { AudioEncoder } from "./AudioEncoder.js";
import { concatBytes } from "./concatBytes.js";
import { toPcm16Bytes } from "./toPcm16Bytes.js";
import { wavHeader } from "./wavHeader.js";

/**
 * 16-bit mono WAV at the model's own rate. Streaming: a header with unknown sizes first, then samples as they come.
 * Not streaming: everything is held until `end()` so the header can carry the true sizes.
 */
export function createWavEncoder(sampleRate: number, streaming: boolean): AudioEncoder {
    let headerSent = false;
    const held: Uint8Array[] = [];
    return {
        contentType: "audio/wav",
        sampleRate,
        async push(samples) {
            const data = toPcm16Bytes(samples);
            if (!streaming) {
                held.push(data);
                return new Uint8Array(0);
            }
            if (headerSent) return data;
            headerSent = true;
            return concatBytes([wavHeader(sampleRate), data]);
        },
        async end() {
            if (streaming) return headerSent ? new Uint8Array(0) : wavHeader(sampleRate);
            const data = concatBytes(held);
            return concatBytes([wavHeader(sampleRate, data.length), data]);
        }
    };
}
