/** OpenAI wire types of /v1/images/generations, plus the spec's Stable Diffusion fields (README "Images"). */
export type ImagesRequest = {
    prompt: string;
    model: string;
    n?: number | null;
    size?: string | null;
    quality?: ImageQuality | "standard" | "hd" | null;
    response_format?: "b64_json" | "url" | null;
    output_format?: OutputFormat | null;
    output_compression?: number | null;
    background?: "opaque" | "auto" | "transparent" | null;
    stream?: boolean | null;
    partial_images?: number | null;
    style?: string | null;
    moderation?: string | null;
    user?: string | null;
    // The spec's Stable Diffusion fields and the guidance extension.
    negative_prompt?: string | null;
    steps?: number | null;
    sampler?: string | null;
    seed?: number | null;
    guidance_scale?: number | null;
};

export const imageQualities = ["low", "medium", "high", "auto"] as const;
export type ImageQuality = typeof imageQualities[number];

export const outputFormats = ["png", "jpeg", "webp"] as const;
export type OutputFormat = typeof outputFormats[number];

export type ImagesUsage = {
    input_tokens: number;
    output_tokens: number;
    total_tokens: number;
    input_tokens_details: {text_tokens: number, image_tokens: number};
};

export type ImageData = {
    b64_json?: string;
    url?: string;
    /** Only when the prompt was rewritten (never here): OpenAI's schema types it as a string, so it is left out rather than null. */
    revised_prompt?: string;
    /** The seed of this image (extension); a MidJourney-style grid reports its four in `seeds`. */
    seed: number;
    seeds?: number[];
};

export type ImagesResponse = {
    created: number;
    data: ImageData[];
    size: string;
    output_format: OutputFormat;
    quality: ImageQuality;
    background: "opaque";
    usage: ImagesUsage;
};
