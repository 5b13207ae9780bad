import sharp, { type Metadata } from "sharp";

/** Pixels as a model's processor takes them: 8-bit RGB, row by row (`width * height * 3` bytes). */
export type DecodedImage = {rgb: Uint8Array, width: number, height: number, originalWidth: number, originalHeight: number};

export type DecodeLimits = {
    /** Width x height of the encoded image, read from its header before its pixels are decoded. */
    maxPixels: number;
    /** The longer edge of the result: a larger image is scaled down to it (aspect kept), a smaller one is kept. */
    maxEdge: number;
};

/** Why an image was refused: `pixels` past the limit, or `undecodable` (a corrupt or truncated file). */
export class ImageDecodeFailure extends Error {
    constructor(readonly reason: "pixels" | "undecodable", message: string) {
        super(message);
        this.name = "ImageDecodeFailure";
    }
}

/**
 * An encoded PNG, JPEG, WebP or GIF (its first frame) as RGB with sharp (libvips): turned upright by its EXIF orientation,
 * transparency laid on white, scaled down to fit `maxEdge`. Synchronous work of libvips runs on its own threads; callers
 * run this in a worker anyway, so a request's decode never holds the main thread.
 */
export async function decodeImage(bytes: Uint8Array, limits: DecodeLimits): Promise<DecodedImage> {
    let metadata: Metadata;
    try {
        metadata = await sharp(bytes, {limitInputPixels: false}).metadata();
    } catch (error) {
        throw new ImageDecodeFailure("undecodable", `the image cannot be decoded (${(error as Error).message})`);
    }
    const width = metadata.width ?? 0;
    const height = metadata.pageHeight ?? metadata.height ?? 0;
    if (width * height > limits.maxPixels)
        throw new ImageDecodeFailure("pixels", `the image is ${width}x${height} pixels, more than the server's limit of ${limits.maxPixels.toLocaleString("en-US")} pixels`);
    try {
        const {data, info} = await sharp(bytes, {limitInputPixels: limits.maxPixels, failOn: "error", pages: 1})
            .rotate()
            .flatten({background: "#ffffff"})
            .resize({width: limits.maxEdge, height: limits.maxEdge, fit: "inside", withoutEnlargement: true})
            .toColourspace("srgb")
            .removeAlpha()
            .raw()
            .toBuffer({resolveWithObject: true});
        if (info.channels !== 3)
            throw new Error(`${info.channels} channels after conversion to RGB`);
        // A buffer of its own (so the caller may move it to another thread), not a view into a shared slab.
        const rgb = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? new Uint8Array(data.buffer) : new Uint8Array(data);
        return {rgb, width: info.width, height: info.height, originalWidth: width, originalHeight: height};
    } catch (error) {
        throw new ImageDecodeFailure("undecodable", `the image cannot be decoded (${(error as Error).message})`);
    }
}
