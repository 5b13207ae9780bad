import type { CapabilityManifest } from "../CapabilityManifest.js";
import { imagesManifest, type ImageSettings } from "./imagesManifest.js";

/** The image task (/v1/images/generations on Stable Diffusion ONNX folders): what the manifest loader and the downloader know of it. */
export const imagesManifestPart = {
    task: "image" as const,
    endpoints: ["/v1/images/generations"],
    manifest: imagesManifest,
    // A diffusers/optimum Stable Diffusion export.
    recognise: {folderFiles: ["model_index.json"], pipelineTags: ["text-to-image"]}
} satisfies CapabilityManifest<ImageSettings>;
