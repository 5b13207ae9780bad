import { toInt16 } from "./toInt16.js";

/** Float samples as signed 16-bit little-endian bytes (written through a DataView so the host's byte order never matters). */
export function toPcm16Bytes(samples: Float32Array): Uint8Array {
    const values = toInt16(samples);
    const bytes = new Uint8Array(values.length * 2);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < values.length; i++) view.setInt16(i * 2, values[i], true);
    return bytes;
}
