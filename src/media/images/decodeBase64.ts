/** Bytes that standard base64 of `length` characters (its `=` padding counted in) stands for. */
export function base64Bytes(length: number, padding: number): number {
    return Math.floor((length - padding) * 3 / 4);
}

/** The `=` padding at the end of a base64 string (0 to 2). */
export function base64Padding(data: string): number {
    return data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
}

/**
 * Standard base64 (padded or not) as bytes; null when it is not. Node's decoder skips characters outside the alphabet
 * and stops at padding, so a string that decodes to fewer bytes than its length says held something else: checked
 * natively in one pass. Slow for large inputs on Node 20 (about 100 MB/s), so callers run it in a worker.
 */
export function decodeBase64(data: string): Uint8Array | null {
    const padding = base64Padding(data);
    if (data.length % 4 === 1 || (padding > 0 && data.length % 4 !== 0) || data.includes("-") || data.includes("_"))
        return null;
    const bytes = Buffer.from(data, "base64");
    return bytes.length === base64Bytes(data.length, padding) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : null;
}
