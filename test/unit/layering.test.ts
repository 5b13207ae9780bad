import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const src = path.resolve(import.meta.dirname, "../../src");

/**
 * Every layer imports only downward: never a layer above, nor another folder of its own rank (two
 * folders of one rank are independent of each other). Leaves (settings, logger, version, projectRoot)
 * are below all; config.ts reads the server's settings and those each capability's manifest part adds,
 * so it sits just above the capabilities; a capability never imports another capability's folder: what two capabilities share
 * (audio codecs, resampling) lives below them, in media/. core/'s folders are layered the same way
 * among themselves (coreLayers).
 */
const layers: [prefix: string, rank: number][] = [
    ["settings/", 0], ["projectRoot.ts", 0],
    // Leaves that read the settings or the project's folder.
    ["logger.ts", 0.5], ["version.ts", 0.5], ["demoModelPath.ts", 0.5],
    ["core/", 1],
    ["runtimes/", 2], ["media/", 2],
    ["auth/", 3], ["capabilities/", 3],
    ["config.ts", 3.5],
    ["server/", 4], ["download/", 4],
    ["startServer.ts", 5], ["usageText.ts", 5],
    ["runServerCommand.ts", 6],
    ["main.ts", 7]
];

/** core/ inside: worker threads below the HTTP pieces, which every other part of core/ may raise errors through. */
const coreLayers: [prefix: string, rank: number][] = [
    ["core/workers/", 0], ["core/files/", 0],
    ["core/http/", 1],
    ["core/validation/", 2], ["core/streaming/", 2],
    ["core/registry/", 3],
    ["core/engines/", 4],
    ["core/admission/", 5]
];

function relativeOf(file: string) {
    return path.relative(src, file).split(path.sep).join("/");
}

function rankOf(file: string) {
    const layer = layerOf(file, layers);
    if (layer == null)
        throw new Error(`${relativeOf(file)} belongs to no layer: add it to the table`);
    return layer.rank;
}

/** The folder (or top-level file) of `file` in `table`, and its rank there. */
function layerOf(file: string, table: [prefix: string, rank: number][]) {
    const relative = relativeOf(file);
    const layer = table.find(([prefix]) => relative === prefix || relative.startsWith(prefix));
    return layer == null ? null : {prefix: layer[0], rank: layer[1]};
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

/** The packages a file imports (statically, by type, or dynamically). */
function packageImports(file: string) {
    const text = fs.readFileSync(file, "utf8");
    return new Set([...text.matchAll(/(?:from\s+|import\s*\(\s*)["']((?:@[^/"']+\/)?[^./"'][^/"']*)/g)].map((match) => match[1]));
}

/** `file`'s lines that cast through unknown (`as unknown as`): how a private field of a package is reached. */
function unknownCasts(file: string) {
    return fs.readFileSync(file, "utf8").split("\n").flatMap((line, index) =>
        line.includes("as unknown as") ? [`${relativeOf(file)}:${index + 1}`] : []);
}

/** Casts in files that import `packageName`, outside its one internals file. */
function castsOutsideInternals(packageName: string, internalsFile: string) {
    return sourceFiles(src)
        .filter((file) => relativeOf(file) !== internalsFile && packageImports(file).has(packageName))
        .flatMap(unknownCasts);
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

    it("folders of one rank do not import each other, in src/ and inside core/", () => {
        const violations: string[] = [];
        for (const file of sourceFiles(src)) {
            for (const target of relativeImports(file)) {
                for (const table of [layers, coreLayers]) {
                    const [from, to] = [layerOf(file, table), layerOf(target, table)];
                    if (from == null || to == null || from.prefix === to.prefix)
                        continue;
                    if (from.rank === to.rank)
                        violations.push(`${relativeOf(file)} imports ${relativeOf(target)}, a folder of the same rank`);
                    else if (table === coreLayers && to.rank > from.rank)
                        violations.push(`${relativeOf(file)} imports ${relativeOf(target)}, a core/ folder above it`);
                }
            }
        }
        expect(violations).toEqual([]);
    });

    it("the chat engine imports from chat/ only the engine interface, the settings it is made with, the errors it raises and the engines' shared pieces", () => {
        const chat = path.join(src, "capabilities/chat"), engine = path.join(chat, "llama");
        const allowed = (target: string) => [path.join(chat, "ChatEngine.ts"), path.join(chat, "SpeculativeSettings.ts")].includes(target)
            || target.startsWith(path.join(chat, "errors") + path.sep) || target.startsWith(path.join(chat, "shared") + path.sep);
        const violations = sourceFiles(engine).flatMap((file) => relativeImports(file)
            .filter((target) => target.startsWith(chat + path.sep) && !target.startsWith(engine + path.sep) && !allowed(target))
            .map((target) => `${relativeOf(file)} imports ${relativeOf(target)}`));
        expect(violations).toEqual([]);
    });

    it("the engines' shared pieces (chat/shared/) import from chat/ only the engine interface and each other", () => {
        const chat = path.join(src, "capabilities/chat"), shared = path.join(chat, "shared") + path.sep;
        const violations = sourceFiles(shared).flatMap((file) => relativeImports(file)
            .filter((target) => target.startsWith(chat + path.sep) && !target.startsWith(shared) && target !== path.join(chat, "ChatEngine.ts"))
            .map((target) => `${relativeOf(file)} imports ${relativeOf(target)}`));
        expect(violations).toEqual([]);
    });

    it("chat/ reaches into the engine's folder only where the engine is made (chatCapability.ts)", () => {
        const chat = path.join(src, "capabilities/chat"), engine = path.join(chat, "llama") + path.sep;
        const violations = sourceFiles(chat)
            .filter((file) => !file.startsWith(engine) && file !== path.join(chat, "chatCapability.ts"))
            .flatMap((file) => relativeImports(file).filter((target) => target.startsWith(engine)).map((target) => `${relativeOf(file)} imports ${relativeOf(target)}`));
        expect(violations).toEqual([]);
    });
});

/**
 * Third-party internals behind one wall: a cast through unknown into node-llama-cpp's or transformers.js's
 * objects (a private field, an untyped method) is written only in that package's internals file, whose
 * contract tests say which field an upgrade moved. Checked in every file that imports the package.
 */
describe("casts into third-party internals", () => {
    it("node-llama-cpp: only in src/runtimes/llama/internals.ts", () => {
        expect(castsOutsideInternals("node-llama-cpp", "runtimes/llama/internals.ts")).toEqual([]);
    });

    // The ONNX side moves its casts into runtimes/onnx/transformersInternals.ts in a parallel change (issue #30
    // item 4); the check runs once that file exists.
    const transformersInternals = "runtimes/onnx/transformersInternals.ts";
    it.skipIf(!fs.existsSync(path.join(src, transformersInternals)))(`@huggingface/transformers: only in src/${transformersInternals}`, () => {
        expect(castsOutsideInternals("@huggingface/transformers", transformersInternals)).toEqual([]);
    });

    it("finds a cast in a file that imports the package (the check can fail)", () => {
        const files = sourceFiles(src).filter((file) => packageImports(file).has("node-llama-cpp"));
        expect(files.map(relativeOf)).toContain("runtimes/llama/internals.ts");
        expect(unknownCasts(path.join(src, "runtimes/llama/internals.ts")).length).toBeGreaterThan(0);
    });
});
