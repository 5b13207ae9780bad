import fs from "node:fs";
import path from "node:path";

/**
 * `<file>.sha256`, written after a file was downloaded and verified, in `sha256sum` format (so
 * `sha256sum -c` works in that folder). It spares the next run re-hashing gigabytes: the cached
 * hash is `fresh` (trusted as is) only while the sidecar is at least as new as the file and the
 * file has the expected size; a file replaced or touched since is hashed again and compared.
 * It is also the only record of the hash of a file the catalogue has no sha256 for.
 */
export const hashSidecar = {
    pathOf(file: string) {
        return `${file}.sha256`;
    },

    write(file: string, sha256: string) {
        fs.writeFileSync(hashSidecar.pathOf(file), `${sha256}  ${path.basename(file)}\n`);
    },

    /** The recorded hash of `file` (null when there is none), and whether it can be trusted without re-hashing. */
    read(file: string, expectedSize: number | null): {sha256: string, fresh: boolean} | null {
        try {
            const sidecar = fs.statSync(hashSidecar.pathOf(file));
            const stat = fs.statSync(file);
            const match = /^([0-9a-f]{64}) {2}(.+)\n?$/.exec(fs.readFileSync(hashSidecar.pathOf(file), "utf8"));
            if (match == null || match[2] !== path.basename(file))
                return null;
            return {sha256: match[1], fresh: (expectedSize == null || stat.size === expectedSize) && sidecar.mtimeMs >= stat.mtimeMs};
        } catch {
            return null;
        }
    },

    remove(file: string) {
        fs.rmSync(hashSidecar.pathOf(file), {force: true});
    }
};
