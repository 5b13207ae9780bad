import type { ImageJob } from "./ImageEngine.js";
import type { ImagesUsage } from "./ImagesWire.js";
import type { ImagesJob } from "./toImageJob.js";

/**
 * Output tokens reported per image: its latent positions ((width/8) x (height/8), what the UNet
 * denoises), e.g. 4096 for 512x512. OpenAI bills image tokens by area too; there is no exact match.
 */
export function outputTokensOf(job: ImageJob): number {
    return job.seeds.length * Math.ceil(job.width / 8) * Math.ceil(job.height / 8);
}

/** `usage` of a response and of the completed event: CLIP tokens of prompt + negative prompt in, latent positions out. */
export function toImagesUsage(inputTokens: number, job: ImageJob): ImagesUsage {
    const outputTokens = outputTokensOf(job);
    return {
        input_tokens: inputTokens,
        output_tokens: outputTokens,
        total_tokens: inputTokens + outputTokens,
        input_tokens_details: {text_tokens: inputTokens, image_tokens: 0}
    };
}

/** The fields every streamed event of one image shares (OpenAI's event schemas). */
export function eventEnvelope(images: ImagesJob, createdAt: number) {
    return {created_at: createdAt, size: images.size, quality: images.quality, background: "opaque" as const, output_format: images.outputFormat};
}

/**
 * Progress of one denoising step (the spec's progression deltas), an event type of our own:
 * the official clients yield unknown event types as they are, so they parse the stream unchanged.
 */
export function progressEvent(step: number, steps: number, elapsedMs: number, createdAt: number) {
    return {
        type: "image_generation.progress" as const,
        created_at: createdAt,
        step, steps,
        progress: step / steps,
        elapsed_ms: Math.round(elapsedMs),
        estimated_remaining_ms: Math.round(elapsedMs / step * (steps - step))
    };
}
