import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The folder of the project's package.json, found from this file's own location: the same answer
 * whether the code runs from source (src/projectRoot.ts) or from the build (dist/src/projectRoot.js).
 */
export const projectRoot: string = (() => {
    let folder = path.dirname(fileURLToPath(import.meta.url));
    while (!fs.existsSync(path.join(folder, "package.json"))) {
        const parent = path.dirname(folder);
        if (parent === folder)
            throw new Error(`No package.json above ${fileURLToPath(import.meta.url)}`);
        folder = parent;
    }
    return folder;
})();
