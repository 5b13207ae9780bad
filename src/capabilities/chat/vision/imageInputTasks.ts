import { decodeImage, ImageDecodeFailure } from "../../../media/images/decodeImage.js";
import { transferable } from "../../../core/workers/transferable.js";
import type { TaskContext, TaskModule } from "../../../core/workers/WorkerTask.js";

export type DecodePayload = {bytes: Uint8Array, maxPixels: number, maxEdge: number};
/** The pixels, or why the image was refused (a failure is a result, not a thrown error, so its reason survives the thread). */
export type DecodeResult =
    | {ok: true, rgb: Uint8Array, width: number, height: number, originalWidth: number, originalHeight: number}
    | {ok: false, reason: "pixels" | "undecodable", message: string};

/** Decodes and scales one image a request sent (decodeImage), the pixels moved to the main thread rather than copied. */
async function decode(payload: DecodePayload, context: TaskContext): Promise<DecodeResult> {
    context.throwIfCancelled();
    try {
        const image = await decodeImage(payload.bytes, payload);
        return transferable({ok: true as const, ...image}, [image.rgb.buffer as ArrayBuffer]);
    } catch (error) {
        if (error instanceof ImageDecodeFailure)
            return {ok: false, reason: error.reason, message: error.message};
        throw error;
    }
}

export const tasks = {decode} satisfies TaskModule;
