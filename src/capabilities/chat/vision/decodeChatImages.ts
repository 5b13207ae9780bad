import type { WorkerPool } from "../../../core/workers/WorkerPool.js";
import type { ChatImage } from "../ChatEngine.js";
import { ImageInputError } from "../errors/ImageInputError.js";
import { imageInputTaskHandles } from "./imageInputTaskHandles.js";
import { imageLimits } from "./imageLimits.js";

/** An image's pixels as its model's processor takes them (8-bit RGB rows), with its size before it was scaled down. */
export type ImagePixels = {rgb: Uint8Array, width: number, height: number, originalWidth: number, originalHeight: number};

/**
 * A job's images decoded in the worker pool (one task each, in the request's line of the pool's rotation, cancelled
 * with `signal`), from base64 to RGB scaled to fit `maxEdge` (`detail: "low"`: `imageLimits.lowDetailEdge`). Bad
 * base64, bytes that are not the type said, an image past the pixel limit or one that does not decode: an
 * ImageInputError naming its part (a 400).
 */
export async function decodeChatImages(pool: WorkerPool, images: readonly ChatImage[], signal: AbortSignal, maxEdge: number = imageLimits.maxEdge): Promise<ImagePixels[]> {
    return Promise.all(images.map(async (image) => {
        const edge = image.detail === "low" ? Math.min(maxEdge, imageLimits.lowDetailEdge) : maxEdge;
        const result = await pool.run(imageInputTaskHandles.decode, {base64: image.base64, type: image.type, maxPixels: imageLimits.maxImagePixels, maxEdge: edge}, {signal});
        if (!result.ok)
            throw new ImageInputError(image.source, result.reason, result.message);
        const {ok: _ok, ...pixels} = result;
        return pixels;
    }));
}
