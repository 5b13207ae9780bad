import { decodeBase64 } from "../../../media/images/decodeBase64.js";
import { decodeImage, ImageDecodeFailure } from "../../../media/images/decodeImage.js";
import { sniffImageType, type ImageMediaType } from "../../../media/images/sniffImageType.js";
import { transferable } from "../../../core/workers/transferable.js";
import type { TaskContext, TaskModule } from "../../../core/workers/WorkerTask.js";
import type { DecodeRefusal } from "../errors/ImageInputError.js";

export type DecodePayload = {base64: string, type: ImageMediaType, maxPixels: number, maxEdge: number};
/** The pixels, or why the image was refused (a failure is a result, not a thrown error, so its reason survives the thread). */
export type DecodeResult =
    | {ok: true, rgb: Uint8Array, width: number, height: number, originalWidth: number, originalHeight: number}
    | {ok: false, reason: DecodeRefusal, message: string};

/**
 * One image a request sent, from its base64 to RGB rows scaled to fit `maxEdge` (decodeImage): the base64 checked, the
 * bytes checked to be the type the client said. The pixels are moved to the main thread rather than copied.
 */
async function decode(payload: DecodePayload, context: TaskContext): Promise<DecodeResult> {
    context.throwIfCancelled();
    const bytes = decodeBase64(payload.base64);
    if (bytes == null)
        return {ok: false, reason: "base64", message: "the image data is not valid base64"};
    const sniffed = sniffImageType(bytes);
    if (sniffed == null)
        return {ok: false, reason: "format", message: "the data is not a PNG, JPEG, WebP or GIF image"};
    if (sniffed !== payload.type)
        return {ok: false, reason: "format", message: `the data is a '${sniffed}' image, not '${payload.type}' as the request says`};
    try {
        const image = await decodeImage(bytes, payload);
        return transferable({ok: true as const, ...image}, [image.rgb.buffer as ArrayBuffer]);
    } catch (error) {
        if (error instanceof ImageDecodeFailure)
            return {ok: false, reason: error.reason, message: error.message};
        throw error;
    }
}

export const tasks = {decode} satisfies TaskModule;
