import type { OutputFormat } from "../ImagesWire.js";

export const imageMimeTypes: Readonly<Record<OutputFormat, string>> = {png: "image/png", jpeg: "image/jpeg", webp: "image/webp"};
