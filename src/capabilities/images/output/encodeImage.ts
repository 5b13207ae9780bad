import sharp from "sharp";
import type { OutputFormat } from "../ImagesWire.js";

export type RgbImage = {rgb: Uint8Array, width: number, height: number};

export type EncodeOptions = {
    format: OutputFormat;
    /** 0..100: JPEG and WebP quality (100 = WebP's best lossy quality); PNG is lossless and ignores it. */
    compression: number;
    /** Scale to this size first (previews smaller than the final image). */
    resizeTo?: {width: number, height: number};
};

/**
 * 8-bit RGB to PNG, JPEG or WebP with sharp (libvips: no external binary, already installed with
 * transformers.js). sharp writes no timestamps or random ids, so the same pixels give the same bytes.
 */
export async function encodeImage(image: RgbImage, options: EncodeOptions): Promise<Buffer> {
    let pipeline = sharp(image.rgb, {raw: {width: image.width, height: image.height, channels: 3}});
    const target = options.resizeTo;
    if (target != null && (target.width !== image.width || target.height !== image.height))
        pipeline = pipeline.resize(target.width, target.height, {fit: "fill"});
    switch (options.format) {
        case "png": return pipeline.png({compressionLevel: 6}).toBuffer();
        case "jpeg": return pipeline.jpeg({quality: Math.max(1, options.compression)}).toBuffer();
        case "webp": return pipeline.webp({quality: Math.max(1, options.compression)}).toBuffer();
    }
}
