/** Ogg's page checksum: CRC-32 with polynomial 0x04C11DB7, initial value 0, not reflected, no final xor (RFC 3533). */
const table = new Uint32Array(256);
for (let i = 0; i < 256; i++) {
    let value = i << 24;
    for (let bit = 0; bit < 8; bit++) value = value & 0x80000000 ? (value << 1) ^ 0x04C11DB7 : value << 1;
    table[i] = value >>> 0;
}

export function oggCrc32(bytes: Uint8Array): number {
    let crc = 0;
    for (let i = 0; i < bytes.length; i++) crc = ((crc << 8) ^ table[((crc >>> 24) ^ bytes[i]) & 0xFF]) >>> 0;
    return crc;
}
