import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadServedManifest, settingsOf } from "../../src/capabilities/loadServedManifest.js";
import { manifestParts } from "../../src/capabilities/manifestParts.js";
import { parseManifest } from "../../src/core/registry/loadManifest.js";
import { ManifestError } from "../../src/core/registry/ManifestError.js";
import type { ModelEntry } from "../../src/core/registry/ModelEntry.js";
import { ModelRegistry } from "../../src/core/registry/ModelRegistry.js";

let dir: string;

beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-test-"));
});

afterEach(() => {
    fs.rmSync(dir, {recursive: true, force: true});
});

/** Creates an empty file (only its existence is checked) and returns its absolute path. */
function touch(relativePath: string) {
    const filePath = path.join(dir, relativePath);
    fs.mkdirSync(path.dirname(filePath), {recursive: true});
    fs.writeFileSync(filePath, "");
    return filePath;
}

/** Writes `models.json` (or `name`) into the temp dir and returns its path. */
function writeManifest(content: unknown, name = "models.json") {
    const filePath = path.join(dir, name);
    fs.mkdirSync(path.dirname(filePath), {recursive: true});
    fs.writeFileSync(filePath, typeof content === "string" ? content : JSON.stringify(content));
    return filePath;
}

/** The ManifestError message thrown by loadManifest (fails when nothing or something else is thrown). */
function manifestErrorOf(manifestPath: string): string {
    try {
        loadServedManifest(manifestPath);
    } catch (error) {
        expect(error).toBeInstanceOf(ManifestError);
        return (error as Error).message;
    }
    throw new Error("loadManifest accepted the manifest");
}

describe("loadManifest", () => {
    it("resolves a relative model path against the manifest's folder, not the working directory", () => {
        const modelPath = touch("config/weights/a.gguf");
        const manifest = writeManifest({models: [{id: "a", task: "chat", path: "weights/a.gguf"}]}, "config/models.json");
        const [entry] = loadServedManifest(manifest);
        expect(entry.path).toBe(modelPath);
        expect(path.isAbsolute(entry.path)).toBe(true);
    });

    it("resolves relative to the folder also when the manifest path itself is relative", () => {
        const modelPath = touch("config/a.gguf");
        const manifest = writeManifest({models: [{id: "a", task: "chat", path: "./a.gguf"}]}, "config/models.json");
        const relativeManifest = path.relative(process.cwd(), manifest);
        expect(loadServedManifest(relativeManifest)[0].path).toBe(modelPath);
    });

    it.each(["pooling", "dtype", "onnxFile"])("refuses '%s' on a GGUF embeddings model: llama.cpp pools as the GGUF says", (field) => {
        touch("e.gguf");
        const value = field === "pooling" ? "cls" : field === "dtype" ? "q8" : "model.onnx";
        const manifest = writeManifest({models: [{id: "e", task: "embeddings", path: "e.gguf", [field]: value}]});
        expect(() => loadServedManifest(manifest)).toThrow(new RegExp(`'models\\[0\\]\\.${field}' does not apply to a GGUF model`));
    });

    it("keeps an absolute model path", () => {
        const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "registry-abs-"));
        try {
            const modelPath = path.join(elsewhere, "b.gguf");
            fs.writeFileSync(modelPath, "");
            const manifest = writeManifest({models: [{id: "b", task: "chat", path: modelPath}]});
            expect(loadServedManifest(manifest)[0].path).toBe(modelPath);
        } finally {
            fs.rmSync(elsewhere, {recursive: true, force: true});
        }
    });

    it("fills in the defaults of optional fields", () => {
        touch("a.gguf");
        const [entry] = loadServedManifest(writeManifest({models: [{id: "a", task: "chat", path: "a.gguf"}]}));
        expect(entry).toEqual({
            id: "a", task: "chat", path: path.join(dir, "a.gguf"),
            family: null, released: null, aliases: [], ownedBy: "local",
            contextSize: null, threads: null, parallel: null, settings: {reasoning: "auto", speculative: null, draftModel: null, draftMax: null, draftPMin: null, decisions: true}
        } satisfies ModelEntry);
    });

    it("keeps every optional field that is given", () => {
        touch("a.gguf");
        const [entry] = loadServedManifest(writeManifest({models: [{
            id: "a", task: "chat", path: "a.gguf", family: "fam", released: "2024-05-01", aliases: ["x", "y"],
            ownedBy: "me", description: "a model", contextSize: 512, threads: 2, parallel: 3
        }]}));
        expect(entry).toMatchObject({family: "fam", released: "2024-05-01", aliases: ["x", "y"], ownedBy: "me", contextSize: 512, threads: 2, parallel: 3});
    });

    it("the model library's fields: preload, keepAlive (a duration, seconds, 0 or forever) and pin; a bad keepAlive names the field", () => {
        touch("a.gguf");
        const entries = loadServedManifest(writeManifest({models: [
            {id: "a", task: "chat", path: "a.gguf", preload: true, keepAlive: "90s", pin: true},
            {id: "b", task: "chat", path: "a.gguf", keepAlive: "forever"},
            {id: "c", task: "chat", path: "a.gguf", keepAlive: 0},
            {id: "d", task: "chat", path: "a.gguf"}
        ]}));
        expect(entries[0]).toMatchObject({preload: true, keepAliveMs: 90_000, pin: true});
        expect(entries[1].keepAliveMs).toBeNull();
        expect(entries[2].keepAliveMs).toBe(0);
        expect(entries[3]).not.toHaveProperty("keepAliveMs");
        const manifest = writeManifest({models: [{id: "a", task: "chat", path: "a.gguf", keepAlive: "soon"}]});
        expect(manifestErrorOf(manifest)).toBe(`Invalid model manifest ${manifest}: 'models[0].keepAlive' must be "forever", a number of seconds, or a duration such as "30s", "5m" or "2h"; got "soon".`);
    });

    it("keepAlive seconds as a JSON number or as text alike, fractions too; -1 is forever; longer than a timer's 24.8 days too", () => {
        touch("a.gguf");
        const keepAliveOf = (keepAlive: unknown) => loadServedManifest(writeManifest({models: [{id: "a", task: "chat", path: "a.gguf", keepAlive}]}))[0].keepAliveMs;
        expect([keepAliveOf(1.5), keepAliveOf("1.5"), keepAliveOf(-1), keepAliveOf("720h"), keepAliveOf(3_000_000)])
            .toEqual([1500, 1500, null, 2_592_000_000, 3_000_000_000]);
        for (const refused of [-2, -0.5, 1e308])
            expect(manifestErrorOf(writeManifest({models: [{id: "a", task: "chat", path: "a.gguf", keepAlive: refused}]})), String(refused))
                .toContain(`'models[0].keepAlive' must be "forever", a number of seconds`);
    });

    it("accepts a $schema key; an empty model list is an error saying how to serve a model", () => {
        touch("a.gguf");
        expect(loadServedManifest(writeManifest({$schema: "./schema.json", models: [{id: "a", task: "chat", path: "a.gguf"}]})).map((entry) => entry.id)).toEqual(["a"]);
        expect(manifestErrorOf(writeManifest({models: []}))).toMatch(/lists no models: add one, or serve model files directly with `npm start -- <model.gguf or folder>`/);
    });

    it("a missing manifest file is a ManifestError naming the path", () => {
        const missing = path.join(dir, "nope.json");
        expect(manifestErrorOf(missing)).toBe(`Model manifest not found: ${missing}`);
    });

    it("a manifest that is a folder cannot be read", () => {
        fs.mkdirSync(path.join(dir, "folder.json"));
        expect(manifestErrorOf(path.join(dir, "folder.json"))).toMatch(/^Cannot read model manifest/);
    });

    it("invalid JSON is a ManifestError naming the file", () => {
        const manifest = writeManifest("{models: [");
        expect(manifestErrorOf(manifest)).toMatch(new RegExp(`^Model manifest ${escapeRegExp(manifest)} is not valid JSON: `));
    });

    it("a model folder's config.json given as the manifest (`npm start -- folder/config.json`) names the folder to give instead", () => {
        const config = writeManifest({model_type: "bert", architectures: ["BertModel"]}, "tiny-bert/config.json");
        expect(manifestErrorOf(config)).toBe(`Model manifest ${config} is a model's configuration, not a manifest (it has no 'models' list): ` +
            `serve its folder with \`npm start -- ${path.dirname(config)}\`.`);
    });

    it.each([
        ["a missing 'models'", {}, "'models'"],
        ["a misspelt key", {models: [{id: "a", task: "chat", path: "a.gguf", contextsize: 512}]}, "'models[0].contextsize'"],
        ["a missing id", {models: [{task: "chat", path: "a.gguf"}]}, "'models[0].id'"],
        ["an unknown task", {models: [{id: "a", task: "dance", path: "a.gguf"}]}, "'models[0].task'"],
        ["a too small contextSize", {models: [{id: "a", task: "chat", path: "a.gguf", contextSize: 8}]}, "'models[0].contextSize'"],
        ["a decimal threads", {models: [{id: "a", task: "chat", path: "a.gguf", threads: 1.5}]}, "'models[0].threads'"],
        ["a malformed released date", {models: [{id: "a", task: "chat", path: "a.gguf", released: "May 2024"}]}, "'models[0].released'"],
        ["an alias with a space", {models: [{id: "a", task: "chat", path: "a.gguf", aliases: ["my model"]}]}, "'models[0].aliases[0]'"],
        ["an id with a space", {models: [{id: "a b", task: "chat", path: "a.gguf"}]}, "'models[0].id'"]
    ])("a schema error (%s) names the field", (_name, content, field) => {
        touch("a.gguf");
        const manifest = writeManifest(content);
        const message = manifestErrorOf(manifest);
        expect(message).toMatch(new RegExp(`^Invalid model manifest ${escapeRegExp(manifest)}: `));
        expect(message).toContain(field);
    });

    it("a schema error message quotes the offending value", () => {
        touch("a.gguf");
        const manifest = writeManifest({models: [{id: "a", task: "chat", path: "a.gguf", contextSize: 8}]});
        expect(manifestErrorOf(manifest))
            .toBe(`Invalid model manifest ${manifest}: Invalid value for 'models[0].contextSize': 8 is below the minimum of 16.`);
    });

    it("a model path that does not exist is a ManifestError naming the entry and the resolved path", () => {
        touch("a.gguf");
        const manifest = writeManifest({models: [
            {id: "a", task: "chat", path: "a.gguf"},
            {id: "b", task: "chat", path: "missing/b.gguf"}
        ]});
        const message = manifestErrorOf(manifest);
        expect(message).toContain("'models[1].path'");
        expect(message).toContain(path.join(dir, "missing/b.gguf"));
    });

    describe("every name must resolve to exactly one model", () => {
        beforeEach(() => {
            touch("a.gguf");
            touch("b.gguf");
        });
        const a = {id: "a", task: "chat", path: "a.gguf"};
        const b = {id: "b", task: "chat", path: "b.gguf"};

        it("a duplicate id", () => {
            const message = manifestErrorOf(writeManifest({models: [a, {...b, id: "a"}]}));
            expect(message).toContain("'models[1].id' uses the name 'a', already taken by models[0].id");
        });

        it("an alias equal to another model's id", () => {
            const message = manifestErrorOf(writeManifest({models: [a, {...b, aliases: ["a"]}]}));
            expect(message).toContain("'models[1].aliases[0]' uses the name 'a', already taken by models[0].id");
        });

        it("an alias equal to a later model's id", () => {
            const message = manifestErrorOf(writeManifest({models: [{...a, aliases: ["b"]}, b]}));
            expect(message).toContain("'models[0].aliases[0]' uses the name 'b', already taken by models[1].id");
        });

        it("an alias equal to the model's own id", () => {
            const message = manifestErrorOf(writeManifest({models: [{...a, aliases: ["a"]}]}));
            expect(message).toContain("'models[0].aliases[0]' uses the name 'a'");
        });

        it("the same alias on two models", () => {
            const message = manifestErrorOf(writeManifest({models: [{...a, aliases: ["shared"]}, {...b, aliases: ["x", "shared"]}]}));
            expect(message).toContain("'models[1].aliases[1]' uses the name 'shared', already taken by models[0].aliases[0]");
        });

        it("an alias equal to <family>-latest", () => {
            const message = manifestErrorOf(writeManifest({models: [
                {...a, family: "fam"},
                {...b, aliases: ["fam-latest"]}
            ]}));
            expect(message).toContain("the name 'fam-latest' is reserved for the newest model of family 'fam'");
            expect(message).toContain("models[1].aliases[0]");
        });

        it("an id equal to <family>-latest", () => {
            const message = manifestErrorOf(writeManifest({models: [{...a, family: "fam"}, {...b, id: "fam-latest"}]}));
            expect(message).toContain("reserved for the newest model of family 'fam'");
            expect(message).toContain("models[1].id");
        });

        it("a name that only looks like a -latest of no family is fine", () => {
            const entries = loadServedManifest(writeManifest({models: [{...a, aliases: ["other-latest"]}, {...b, family: "fam"}]}));
            expect(entries.map((entry) => entry.id)).toEqual(["a", "b"]);
        });

        it("models given on the command line (no manifest file) are named by their paths, not by a made-up file", () => {
            const models = [{...a, path: path.join(dir, "a.gguf")}, {...b, id: "a", path: path.join(dir, "b.gguf")}];
            expect(() => parseManifest({models}, {commandLine: true}, settingsOf(manifestParts))).toThrow(new ManifestError(
                `Cannot serve the models given on the command line: the 'id' of ${path.join(dir, "b.gguf")} uses the name 'a', ` +
                `already taken by the 'id' of ${path.join(dir, "a.gguf")}.`));
            expect(() => parseManifest({models: [{...a, path: path.join(dir, "gone.gguf")}]}, {commandLine: true}, settingsOf(manifestParts))).toThrow(
                `Cannot serve the models given on the command line: the 'path' of ${path.join(dir, "gone.gguf")} points to ${path.join(dir, "gone.gguf")}, which does not exist.`);
        });
    });
});

function entry(id: string, extra: Partial<ModelEntry> = {}): ModelEntry {
    return {
        id, task: "chat", path: `/models/${id}.gguf`, family: null, released: null, aliases: [], ownedBy: "local",
        contextSize: null, threads: null, parallel: null, settings: {}, ...extra
    };
}

describe("ModelRegistry", () => {
    it("resolves ids and aliases to the entry; unknown names to undefined", () => {
        const a = entry("a", {aliases: ["alpha", "first"]});
        const b = entry("b");
        const registry = new ModelRegistry([a, b]);
        expect(registry.resolve("a")).toBe(a);
        expect(registry.resolve("alpha")).toBe(a);
        expect(registry.resolve("first")).toBe(a);
        expect(registry.resolve("b")).toBe(b);
        expect(registry.resolve("c")).toBeUndefined();
        expect(registry.resolve("A")).toBeUndefined();
    });

    it("<family>-latest resolves to the variant released last, whatever the manifest order", () => {
        const mid = entry("fam-2", {family: "fam", released: "2024-06-01"});
        const newest = entry("fam-3", {family: "fam", released: "2025-01-15"});
        const oldest = entry("fam-1", {family: "fam", released: "2023-12-31"});
        const registry = new ModelRegistry([mid, newest, oldest]);
        expect(registry.resolve("fam-latest")).toBe(newest);
    });

    it("each family has its own -latest; a model without family has none", () => {
        const x = entry("x1", {family: "x", released: "2024-01-01"});
        const y = entry("y1", {family: "y", released: "2020-01-01"});
        const lone = entry("lone", {released: "2030-01-01"});
        const registry = new ModelRegistry([x, y, lone]);
        expect(registry.resolve("x-latest")).toBe(x);
        expect(registry.resolve("y-latest")).toBe(y);
        expect(registry.resolve("lone-latest")).toBeUndefined();
        expect(registry.resolve("null-latest")).toBeUndefined();
    });

    it("same release date: the later manifest entry wins", () => {
        const first = entry("first", {family: "fam", released: "2024-01-01"});
        const second = entry("second", {family: "fam", released: "2024-01-01"});
        expect(new ModelRegistry([first, second]).resolve("fam-latest")).toBe(second);
    });

    it("all undated: the later manifest entry wins", () => {
        const first = entry("first", {family: "fam"});
        const second = entry("second", {family: "fam"});
        expect(new ModelRegistry([first, second]).resolve("fam-latest")).toBe(second);
    });

    it("a dated variant beats an undated one in either manifest order", () => {
        // Undated counts as older than any date: an undated variant listed last does not become -latest.
        const dated = entry("dated", {family: "fam", released: "2020-01-01"});
        const undated = entry("undated", {family: "fam"});
        expect(new ModelRegistry([dated, undated]).resolve("fam-latest")).toBe(dated);
        expect(new ModelRegistry([undated, dated]).resolve("fam-latest")).toBe(dated);
    });

    it("aliasesOf lists the aliases, plus <family>-latest only for the newest variant", () => {
        const old = entry("fam-1", {family: "fam", released: "2023-01-01", aliases: ["fam-old"]});
        const latest = entry("fam-2", {family: "fam", released: "2024-01-01", aliases: ["fam-new", "fam-stable"]});
        const other = entry("other");
        const registry = new ModelRegistry([old, latest, other]);
        expect(registry.aliasesOf(old)).toEqual(["fam-old"]);
        expect(registry.aliasesOf(latest).sort()).toEqual(["fam-latest", "fam-new", "fam-stable"]);
        expect(registry.aliasesOf(other)).toEqual([]);
    });

    it("works on what loadManifest returns", () => {
        touch("m/a.gguf");
        touch("m/b.gguf");
        const entries = loadServedManifest(writeManifest({models: [
            {id: "tiny-1", task: "chat", path: "m/a.gguf", family: "tiny", released: "2024-01-01", aliases: ["tiny"]},
            {id: "tiny-2", task: "chat", path: "m/b.gguf", family: "tiny", released: "2024-02-01"}
        ]}));
        const registry = new ModelRegistry(entries);
        expect(registry.resolve("tiny")?.id).toBe("tiny-1");
        expect(registry.resolve("tiny-latest")?.id).toBe("tiny-2");
        expect(registry.resolve("tiny-latest")?.path).toBe(path.join(dir, "m/b.gguf"));
    });

    it("add (a pulled model) registers new ids; a taken id is skipped, a taken alias stays its model's; <family>-latest follows the newest", () => {
        const base = entry("base", {aliases: ["gpt-4o-mini"], family: "tiny", released: "2024-01-01"});
        const registry = new ModelRegistry([base]);
        const added = registry.add([
            entry("pulled", {aliases: ["gpt-4o-mini", "gpt-3.5-turbo"], family: "tiny", released: "2025-01-01"}),
            entry("base", {path: "/elsewhere.gguf"})
        ]);
        expect(added.map((each) => [each.id, each.aliases])).toEqual([["pulled", ["gpt-3.5-turbo"]]]);
        expect(registry.entries.map((each) => each.id)).toEqual(["base", "pulled"]);
        expect(registry.resolve("base")).toBe(base);
        expect(registry.resolve("gpt-4o-mini")).toBe(base);
        expect(registry.resolve("gpt-3.5-turbo")?.id).toBe("pulled");
        expect(registry.resolve("tiny-latest")?.id).toBe("pulled");
        expect(registry.add([entry("pulled")])).toEqual([]);
    });
});

function escapeRegExp(text: string) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
