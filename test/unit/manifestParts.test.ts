import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadCapabilities } from "../../src/capabilities/capabilities.js";
import { capabilityList } from "../../src/capabilities/capabilityList.js";
import { manifestParts } from "../../src/capabilities/manifestParts.js";
import type { ModelRecognition } from "../../src/capabilities/ModelRecognition.js";
import { catalogueTasks } from "../../src/download/CatalogueEntry.js";

const root = path.resolve(import.meta.dirname, "../..");

/** Every module a file loads when it is imported: its static imports, transitively (bare package names as they are). */
function staticClosure(entry: string) {
    const files = new Set<string>();
    const packages = new Set<string>();
    const pending = [entry];
    while (pending.length > 0) {
        const file = pending.pop()!;
        if (files.has(file))
            continue;
        files.add(file);
        const text = fs.readFileSync(file, "utf8");
        // `import type` is erased; `import(...)` loads only when its code runs.
        for (const match of text.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^;]*?from\s+["']([^"']+)["']|^\s*import\s+["']([^"']+)["']/gm)) {
            const specifier = match[1] ?? match[2];
            if (specifier.startsWith("."))
                pending.push(path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".ts")));
            else if (!specifier.startsWith("node:"))
                packages.add(specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]);
        }
    }
    return {files: [...files].map((file) => path.relative(root, file)), packages: [...packages]};
}

function sourceFiles(folder: string): string[] {
    return fs.readdirSync(folder, {withFileTypes: true}).flatMap((entry) =>
        entry.isDirectory() ? sourceFiles(path.join(folder, entry.name)) : /\.(ts|mjs)$/.test(entry.name) ? [path.join(folder, entry.name)] : []);
}

describe("each capability's manifest part, apart from its server part", () => {
    it("one line per capability: the server parts loaded serve the tasks, endpoints and manifest fields of their manifest parts", async () => {
        const capabilities = await loadCapabilities();
        expect(manifestParts.map((part) => part.task)).toEqual(capabilities.map((capability) => capability.task));
        manifestParts.forEach((part, index) => {
            expect(capabilities[index].endpoints).toEqual(part.endpoints);
            expect(capabilities[index].manifest).toBe("manifest" in part ? part.manifest : undefined);
        });
        expect(catalogueTasks).toEqual(capabilities.map((capability) => capability.task));
    });

    it("`npm run download-models` loads no handler, engine or codec, nor sharp, ONNX Runtime or node-llama-cpp", () => {
        const {files, packages} = staticClosure(path.join(root, "scripts/download-models/main.ts"));
        const serverFiles = files.filter((file) => /(Handler|Engine|Capability|capabilities|Encoder|Tasks)\.ts$/.test(file) || file.startsWith("src/server/"));
        expect(serverFiles).toEqual([]);
        expect(packages.filter((name) => ["sharp", "node-llama-cpp", "@huggingface/transformers", "onnxruntime-node", "koa", "@koa/router"].includes(name))).toEqual([]);
        // The walk does see what the server loads (the check above can fail).
        expect(staticClosure(path.join(root, "src/capabilities/images/imagesCapability.ts")).packages).toContain("sharp");
    });

    it("the capability list names each server part by a dynamic import only (so the downloader never loads one)", () => {
        const list = fs.readFileSync(path.join(root, "src/capabilities/capabilityList.ts"), "utf8");
        expect(staticClosure(path.join(root, "src/capabilities/capabilityList.ts")).files.filter((file) => /Capability\.ts$/.test(file) && !file.endsWith("/Capability.ts"))).toEqual([]);
        // Its folders, derived: every folder of src/capabilities/ is one line of the list, and every line names one.
        const folders = fs.readdirSync(path.join(root, "src/capabilities"), {withFileTypes: true}).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
        expect([...list.matchAll(/import\("\.\/(\w+)\/\w+Capability\.js"\)/g)].map((match) => match[1]).sort()).toEqual(folders.sort());
        expect(folders.length).toBe(capabilityList.length);
    });

    it("the built-in capabilities' recognition rules do not overlap: no fact is claimed by two (recogniseModel would refuse such a model)", () => {
        const facts = ["folderFiles", "architectures", "modelTypes", "ggufPoolingTypes", "ggufArchitectures", "pipelineTags"] as const;
        let seen = 0;
        for (const fact of facts) {
            const owners = new Map<string | number, string>();
            for (const part of manifestParts) {
                for (const value of new Set<string | number>((part.recognise as ModelRecognition | undefined)?.[fact] ?? [])) {
                    expect(owners.get(value), `${fact} ${value}: ${part.task}`).toBeUndefined();
                    owners.set(value, part.task);
                }
            }
            seen += owners.size;
        }
        expect(seen).toBeGreaterThan(20);
        expect(manifestParts.filter((part) => part.recognise != null && "anyOtherGguf" in part.recognise).map((part) => part.task)).toEqual(["chat"]);
        expect(manifestParts.filter((part) => part.recognise == null)).toEqual([]);
    });

    it("a capability is named only in its folder and its line: no file of src/ outside them says its task or reaches into its folder", () => {
        const list = fs.readFileSync(path.join(root, "src/capabilities/capabilityList.ts"), "utf8");
        // The list's lines in order, each with the folder its server part is imported from.
        const lineFolders = [...list.matchAll(/\{manifest: \w+, server: async \(\) => \(await import\("\.\/(\w+)\//g)].map((match) => match[1]);
        expect(lineFolders.length).toBe(capabilityList.length);
        const files = sourceFiles(path.join(root, "src")).map((file) => path.relative(root, file));
        capabilityList.forEach(({manifest}, index) => {
            const folder = lineFolders[index];
            const folderPath = `src/capabilities/${folder}/`;
            expect(fs.existsSync(path.join(root, folderPath)), folderPath).toBe(true);
            const outside = files.filter((file) => !file.startsWith(folderPath) && file !== "src/capabilities/capabilityList.ts");
            const naming = outside.filter((file) => {
                // Wire words that share a task's name without naming the capability: a content part's or a block's
                // type (chat's and Anthropic's `type: "image"`, System One's asset `type` and its schema's enum) and a
                // model's modalities (OpenRouter's ["text", "image"]). A capability is named by its task (`task:`,
                // engineFor's argument, a comparison with an entry's task), never as a `type`.
                const wireWord = new RegExp(String.raw`(\btype\??\s*(:|===|!==)\s*|\benum:\s*\[|\["text", )"${manifest.task}"`, "g");
                const text = fs.readFileSync(path.join(root, file), "utf8").replace(wireWord, "");
                return text.includes(`"${manifest.task}"`) || text.includes(`capabilities/${folder}/`) || text.includes(`"./${folder}/`) ||
                    manifest.endpoints.some((endpoint) => text.includes(`"${endpoint}"`));
            });
            expect(naming, `files outside ${folderPath} naming the '${manifest.task}' capability`).toEqual([]);
        });
    });
});
