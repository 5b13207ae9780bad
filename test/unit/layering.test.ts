import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const src = path.resolve(import.meta.dirname, "../../src");

/**
 * Every layer imports only downward. Leaves (settings, logger, version, projectRoot) are below all; config.ts
 * reads the settings of the server and of each capability's manifest part, so it sits with the capabilities;
 * a capability never imports another capability's folder: what two capabilities share (audio
 * codecs, resampling) lives below them, in media/.
 */
const layers: [prefix: string, rank: number][] = [
    ["settings/", 0], ["logger.ts", 0], ["version.ts", 0], ["projectRoot.ts", 0], ["demoModelPath.ts", 0],
    ["core/", 1],
    ["runtimes/", 2], ["media/", 2],
    ["auth/", 3], ["capabilities/", 3], ["config.ts", 3],
    ["server/", 4], ["download/", 4],
    ["startServer.ts", 5], ["usageText.ts", 5],
    ["runServerCommand.ts", 6],
    ["main.ts", 7]
];

function rankOf(file: string) {
    const relative = path.relative(src, file).split(path.sep).join("/");
    const layer = layers.find(([prefix]) => relative === prefix || relative.startsWith(prefix));
    if (layer == null)
        throw new Error(`${relative} belongs to no layer: add it to the table`);
    return layer[1];
}

function capabilityOf(file: string) {
    const match = /^capabilities\/([^/]+)\//.exec(path.relative(src, file).split(path.sep).join("/"));
    return match?.[1] ?? null;
}

function sourceFiles(folder: string): string[] {
    return fs.readdirSync(folder, {withFileTypes: true}).flatMap((entry) => {
        const full = path.join(folder, entry.name);
        return entry.isDirectory() ? sourceFiles(full) : /\.(ts|mjs)$/.test(entry.name) ? [full] : [];
    });
}

function relativeImports(file: string) {
    const text = fs.readFileSync(file, "utf8");
    return [...text.matchAll(/(?:from\s+|import\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g)]
        .map((match) => path.resolve(path.dirname(file), match[1].replace(/\.js$/, ".ts")));
}

describe("layering of src/", () => {
    it("no file imports a layer above its own, and capabilities do not import each other", () => {
        const violations: string[] = [];
        for (const file of sourceFiles(src)) {
            for (const target of relativeImports(file)) {
                const from = path.relative(src, file), to = path.relative(src, target);
                if (rankOf(target) > rankOf(file))
                    violations.push(`${from} imports ${to}, a layer above it`);
                const [fromCapability, toCapability] = [capabilityOf(file), capabilityOf(target)];
                if (fromCapability != null && toCapability != null && fromCapability !== toCapability)
                    violations.push(`${from} imports ${to}, another capability's folder`);
            }
        }
        expect(violations).toEqual([]);
    });
});
