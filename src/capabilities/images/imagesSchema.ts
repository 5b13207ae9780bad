import { imageQualities, outputFormats } from "./ImagesWire.js";

/** Largest seed: seeds are unsigned 32-bit integers, as AUTOMATIC1111's. */
export const maxSeed = 2 ** 32 - 1;

/**
 * JSON schema of an image request: OpenAI's fields and the spec's Stable Diffusion ones, in their
 * widest bounds. What depends on the model (its parameter set, size bounds, streaming with n > 1)
 * is checked by toImageJob. Unknown fields are allowed, as elsewhere.
 */
export const imagesSchema = {
    type: "object",
    required: ["prompt", "model"],
    properties: {
        prompt: {type: "string", minLength: 1, maxLength: 32000},
        model: {type: "string", minLength: 1},
        n: {type: ["integer", "null"], minimum: 1, maximum: 4},
        size: {type: ["string", "null"]},
        // OpenAI's dall-e-3 values `standard` and `hd` are taken as `medium` and `high`.
        quality: {type: ["string", "null"], enum: [...imageQualities, "standard", "hd", null]},
        response_format: {type: ["string", "null"], enum: ["b64_json", "url", null]},
        output_format: {type: ["string", "null"], enum: [...outputFormats, null]},
        output_compression: {type: ["integer", "null"], minimum: 0, maximum: 100},
        background: {type: ["string", "null"], enum: ["opaque", "auto", "transparent", null]},
        stream: {type: ["boolean", "null"]},
        partial_images: {type: ["integer", "null"], minimum: 0, maximum: 3},
        style: {type: ["string", "null"]},
        moderation: {type: ["string", "null"]},
        user: {type: ["string", "null"]},
        negative_prompt: {type: ["string", "null"], maxLength: 32000},
        steps: {type: ["integer", "null"], minimum: 1, maximum: 50},
        // Checked by toImageJob, whose message lists the six names.
        sampler: {type: ["string", "null"]},
        seed: {type: ["integer", "null"], minimum: 0, maximum: maxSeed},
        guidance_scale: {type: ["number", "null"], minimum: 0, maximum: 30}
    }
} as const;
