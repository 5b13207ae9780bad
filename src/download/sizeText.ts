import { formatBytes } from "./formatBytes.js";

/**
 * The size of some files as every command prints it (--list, --dry-run, the first-run message, the
 * README): the exact total when every size is known, else the known part and how many are unknown
 * (small git-tracked files whose size the hub shows only rounded).
 */
export function sizeText(sizes: readonly (number | null)[]): string {
    const unknown = sizes.filter((size) => size == null).length;
    const known = sizes.reduce<number>((sum, size) => sum + (size ?? 0), 0);
    if (unknown === 0)
        return formatBytes(known);
    return unknown === sizes.length ? "size unknown" : `${formatBytes(known)} + ${unknown} ${unknown === 1 ? "file" : "files"} of unknown size`;
}
