import type { ImageJob, ImageResult } from "../ImageEngine.js";

/** Which pipeline a task is for; `key` names the loaded sessions in each worker. */
export type SdModelSpec = {
    key: string;
    /** The diffusers/optimum ONNX folder (model_index.json, tokenizer/, text_encoder/, unet/, vae_decoder/, scheduler/). */
    folder: string;
    /** ONNX Runtime intra-op threads per session. */
    threads: number;
    /** A small decoder for previews (absolute path), null = the latent-to-RGB projection. */
    previewDecoder: string | null;
    /** Rows per UNet run at most (n images x 2 with guidance); null = all in one run. Bounds activation memory. Per task (not part of the loaded pipeline). */
    maxUnetBatch?: number | null;
};

export type SdDescribeResult = {
    /** UNet sample size (config or fixed session shape) x VAE scale factor; null sides = unknown, the engine assumes 512. */
    nativeWidth: number;
    nativeHeight: number;
    /** True when the UNet session has a fixed height and width: only the native size works. */
    fixedSize: boolean;
    /** Latent pixels per image pixel side (8 for SD). */
    vaeScaleFactor: number;
    latentChannels: number;
    /** The VAE's latent scaling factor (config `scaling_factor`, default 0.18215). */
    scalingFactor: number;
    /** Tokens per text-encoder call (77 for CLIP). */
    textWindow: number;
    /** The parsed scheduler config (samplers' SchedulerConfig). */
    scheduler: Record<string, unknown>;
    /** Input names and element types of the three networks, for the log. */
    inputs: Record<string, string>;
};

export type GenerateTask = {model: SdModelSpec, job: ImageJob};

export type GenerateTaskResult = ImageResult;
