/** The image formats a request may send, by media type. */
export type ImageMediaType = "image/png" | "image/jpeg" | "image/webp" | "image/gif";

/** What an image's first bytes say it is (PNG, JPEG, WebP, GIF signatures); null for anything else. */
export function sniffImageType(bytes: Uint8Array): ImageMediaType | null {
    const starts = (...signature: number[]) => signature.every((byte, index) => bytes[index] === byte);
    if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a))
        return "image/png";
    if (starts(0xff, 0xd8, 0xff))
        return "image/jpeg";
    if (starts(0x47, 0x49, 0x46, 0x38))
        return "image/gif";
    if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50)
        return "image/webp";
    return null;
}
