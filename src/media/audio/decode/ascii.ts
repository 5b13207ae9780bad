/** `length` bytes at `offset` as Latin-1 text (container magic numbers, chunk ids). */
export const ascii = (bytes: Uint8Array, offset: number, length: number) => String.fromCharCode(...bytes.subarray(offset, offset + length));
