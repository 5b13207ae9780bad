import type { Capability } from "../Capability.js";
import type { ImageEngine } from "./ImageEngine.js";
import { imageFileHandler } from "./imageFileHandler.js";
import { imageFilesPath, imagesHandler } from "./imagesHandler.js";
import type { ImageSettings } from "./imagesManifest.js";
import { imagesManifestPart } from "./imagesManifestPart.js";
import { ImageLinkStore } from "./output/ImageLinkStore.js";

export type ImagesCapabilityOptions = {
    /** The clock of the link store (tests of expiry). */
    now?: () => number;
};

/** How long `response_format: "url"` links work, as OpenAI's. */
export const imageLinkTtlMs = 60 * 60 * 1000;
/** Memory the linked images may take before the oldest are dropped early. */
const imageLinkMaxBytes = 512 * 1024 * 1024;

/**
 * /v1/images/generations: Stable Diffusion pipelines (ONNX in the shared worker pool) behind
 * OpenAI's image API with the spec's Stable Diffusion and MidJourney-style parameter sets.
 */
export function createImagesCapability(options: ImagesCapabilityOptions = {}): Capability<ImageEngine, ImageSettings> {
    return {
        ...imagesManifestPart,
        async createEngine(entry, {config, logger, workers}) {
            const {OnnxImageEngine} = await import("./onnx/OnnxImageEngine.js");
            const engine = await OnnxImageEngine.load(workers(), entry, {
                threads: entry.threads ?? config.onnxThreads,
                // One generation at a time per model: a UNet step already uses every ONNX thread.
                parallel: entry.parallel ?? 1,
                queueSize: config.queueSize,
                onWarning: (message) => logger.warn(message),
                workers: entry.workers
            });
            // The manifest's default size is only checkable once the model says its bounds: a wrong one stops the
            // load (naming the field) instead of turning every request without `size` into a 400 about `size`.
            const size = entry.settings.defaults.size;
            const {min, max, multiple} = engine.sizeBounds;
            if (size != null && size.split("x").map(Number).some((side) => side < min || side > max || side % multiple !== 0)) {
                await engine.dispose();
                throw new Error(`Model '${entry.id}': manifest field 'defaults.size' is ${size}, outside this model's sizes ` +
                    `(each side ${min}..${max}, a multiple of ${multiple}).`);
            }
            return engine;
        },
        routes(router, context) {
            const links = new ImageLinkStore({now: options.now ?? Date.now, ttlMs: imageLinkTtlMs, maxBytes: imageLinkMaxBytes});
            router.post("/images/generations", context.jsonBody, imagesHandler(context, links));
            context.publicRouter.get(`${imageFilesPath}/:name`, imageFileHandler(links));
        }
    };
}

export const imagesCapability = createImagesCapability();
