/**
 * The bounds on images in a chat-family request (docs/vision.md): an image's encoded bytes (a 413 past it), images per
 * request and pixels per image (a 400), and the longest edge a decoded image is scaled down to before a model sees it.
 */
export const imageLimits = {
    /** Encoded bytes of one image (after base64): Anthropic's API takes 5 MB, OpenAI's 20 MB; the larger. */
    maxImageBytes: 20 * 1024 * 1024,
    /** Images in one request, every message counted. */
    maxImages: 16,
    /** Width x height of one image, read from its header before any pixel is decoded (a decompression bomb's guard). */
    maxImagePixels: 50_000_000,
    /** A decoded image larger than this on its longer edge is scaled down to it (aspect kept); SmolVLM's processor works at 2048 at most. */
    maxEdge: 2048,
    /** The longer edge for `detail: "low"`. */
    lowDetailEdge: 512
} as const;
