/**
 * SD UNets halve the latent three times and concatenate the skip connections on the way up, so an export only
 * runs latents whose sides are multiples of 8 (images multiples of 64); diffusers and A1111 simply fail on
 * others. Rows of [channels, height, width] are padded here to the next multiple by repeating the edge pixels,
 * and the network's output is cropped back: sizes that are multiples of 8 pixels work, the padding only gives
 * the border pixels a little more context.
 */
const latentMultiple = 8;

export function paddedSide(side: number) {
    return Math.ceil(side / latentMultiple) * latentMultiple;
}

/** `rows` images of [channels, height, width] -> [channels, paddedHeight, paddedWidth], edges repeated. */
export function padLatents(data: Float32Array, rows: number, channels: number, height: number, width: number): Float32Array {
    const paddedHeight = paddedSide(height);
    const paddedWidth = paddedSide(width);
    if (paddedHeight === height && paddedWidth === width)
        return data;
    const out = new Float32Array(rows * channels * paddedHeight * paddedWidth);
    for (let plane = 0; plane < rows * channels; plane++)
        for (let y = 0; y < paddedHeight; y++) {
            const from = plane * height * width + Math.min(y, height - 1) * width;
            const to = plane * paddedHeight * paddedWidth + y * paddedWidth;
            out.set(data.subarray(from, from + width), to);
            out.fill(data[from + width - 1], to + width, to + paddedWidth);
        }
    return out;
}

/** The inverse crop: [channels, paddedHeight, paddedWidth] rows back to [channels, height, width]. */
export function cropLatents(data: Float32Array, rows: number, channels: number, height: number, width: number): Float32Array {
    const paddedHeight = paddedSide(height);
    const paddedWidth = paddedSide(width);
    if (paddedHeight === height && paddedWidth === width)
        return data;
    const out = new Float32Array(rows * channels * height * width);
    for (let plane = 0; plane < rows * channels; plane++)
        for (let y = 0; y < height; y++) {
            const from = plane * paddedHeight * paddedWidth + y * paddedWidth;
            out.set(data.subarray(from, from + width), plane * height * width + y * width);
        }
    return out;
}
