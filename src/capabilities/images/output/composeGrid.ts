import type { RgbImage } from "./encodeImage.js";

/**
 * Four same-sized RGB images as one 2x2 grid (MidJourney's layout: 1 2 / 3 4), twice as wide and
 * twice as high. Pure row copies.
 */
export function composeGrid(tiles: readonly RgbImage[]): RgbImage {
    if (tiles.length !== 4)
        throw new RangeError(`A grid needs 4 images, got ${tiles.length}`);
    const {width, height} = tiles[0];
    if (tiles.some((tile) => tile.width !== width || tile.height !== height))
        throw new RangeError("The grid's images must have the same size");
    const rowBytes = width * 3;
    const rgb = new Uint8Array(rowBytes * 2 * height * 2);
    tiles.forEach((tile, index) => {
        const left = (index % 2) * rowBytes;
        const top = Math.floor(index / 2) * height;
        for (let y = 0; y < height; y++)
            rgb.set(tile.rgb.subarray(y * rowBytes, (y + 1) * rowBytes), (top + y) * rowBytes * 2 + left);
    });
    return {rgb, width: width * 2, height: height * 2};
}
