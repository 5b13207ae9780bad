/**
 * A1111's "Approx cheap" live preview: each latent pixel's 4 channels times a fixed 4x3 matrix give RGB in about
 * -1..1 (fitted for SD1.x/2.x latents, in the sampler's scaled latent space). Microseconds per image, one preview
 * pixel per latent pixel (the API layer scales it up); other latent channel counts use the first 4 channels.
 */
const factors = [
    [0.298, 0.207, 0.208],
    [0.187, 0.286, 0.173],
    [-0.158, 0.189, 0.264],
    [-0.184, -0.271, -0.473]
];

/** `latent`: one image, [channels, height, width] row-major. Returns RGB bytes, height*width*3. */
export function latentPreview(latent: ArrayLike<number>, channels: number, height: number, width: number): Uint8Array {
    const plane = height * width;
    const rgb = new Uint8Array(plane * 3);
    const used = Math.min(channels, factors.length);
    for (let p = 0; p < plane; p++)
        for (let c = 0; c < 3; c++) {
            let value = 0;
            for (let l = 0; l < used; l++)
                value += latent[l * plane + p] * factors[l][c];
            rgb[p * 3 + c] = toByte(value);
        }
    return rgb;
}

/** -1..1 -> 0..255 as diffusers' image post-processing: clamp((x + 1) / 2) * 255, rounded. */
export function toByte(value: number): number {
    const unit = (value + 1) / 2;
    return Math.round((unit < 0 ? 0 : unit > 1 ? 1 : unit) * 255);
}

/** A decoder's [1, 3, height, width] output in -1..1 as RGB bytes, row-major. */
export function planarToRgb(planar: ArrayLike<number>, height: number, width: number): Uint8Array {
    const plane = height * width;
    const rgb = new Uint8Array(plane * 3);
    for (let p = 0; p < plane; p++)
        for (let c = 0; c < 3; c++)
            rgb[p * 3 + c] = toByte(planar[c * plane + p]);
    return rgb;
}
