import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { sizeText } from "../../src/download/sizeText.js";
import type { CatalogueEntry } from "../../src/download/CatalogueEntry.js";
import { loadCatalogue } from "../../src/download/loadCatalogue.js";
import { manifestEntryOf } from "../../src/download/manifestEntryOf.js";
import { createAjv } from "../../src/core/validation/createAjv.js";
import { manifestSchema } from "../../src/core/registry/manifestSchema.js";
import { loadCapabilities } from "../../src/capabilities/capabilities.js";
import { testCatalogue } from "./fixtures.js";

const capabilities = await loadCapabilities();

const realCatalogue = () => loadCatalogue();

describe("the catalogue in the repo (scripts/download-models/catalogue.json)", () => {
    it("passes the schema and the cross-entry checks", () => {
        expect(realCatalogue().length).toBeGreaterThan(0);
    });

    it("pins every model to a commit (40 hex), never a branch", () => {
        for (const entry of realCatalogue())
            expect(entry.revision, entry.id).toMatch(/^[0-9a-f]{40}$/);
    });

    it("has no duplicate ids or names, and exactly one default model per task", () => {
        const entries = realCatalogue();
        const names = entries.flatMap((entry) => [entry.id, ...entry.aliases]);
        expect(new Set(names).size).toBe(names.length);
        for (const task of new Set(entries.map((entry) => entry.task)))
            expect(entries.filter((entry) => entry.task === task && entry.default), task).toHaveLength(1);
    });

    it("maps the familiar OpenAI names onto the default models", () => {
        const entries = realCatalogue();
        const defaultOf = (task: string) => entries.find((entry) => entry.task === task && entry.default)!;
        expect(defaultOf("chat").aliases).toEqual(expect.arrayContaining(["gpt-3.5-turbo", "gpt-4o-mini"]));
        expect(defaultOf("embeddings").aliases).toEqual(expect.arrayContaining(["text-embedding-ada-002", "text-embedding-3-small"]));
        expect(defaultOf("image").aliases).toEqual(expect.arrayContaining(["dall-e-2", "dall-e-3", "gpt-image-1"]));
        expect(defaultOf("speech").aliases).toEqual(expect.arrayContaining(["tts-1", "tts-1-hd", "gpt-4o-mini-tts"]));
    });

    it("every entry becomes a valid models.json entry", () => {
        const validate = createAjv().compile(manifestSchema(Object.fromEntries(capabilities.map((capability) => [capability.task, capability.manifest]))));
        const models = realCatalogue().map((entry) => manifestEntryOf(entry, "/m", "/m"));
        expect(validate({models}), JSON.stringify(validate.errors)).toBe(true);
    });
});

describe("loadCatalogue rejects", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-catalogue-"));
    afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));
    const attempt = (edit: (models: CatalogueEntry[]) => void) => {
        const models = testCatalogue();
        edit(models);
        const file = path.join(dir, "catalogue.json");
        fs.writeFileSync(file, JSON.stringify({models}));
        return () => loadCatalogue(file);
    };

    it.each<[string, (models: CatalogueEntry[]) => void, RegExp]>([
        ["a branch instead of a commit", (models) => models[0].revision = "main", /'models\[0\]\.revision'/],
        ["a short sha256", (models) => models[0].files[0].sha256 = "abc", /'models\[0\]\.files\[0\]\.sha256'/],
        ["a path climbing out of the model's folder", (models) => models[0].files[0].path = "../evil.gguf", /'models\[0\]\.files\[0\]\.path'/],
        ["an absolute path", (models) => models[0].files[0].path = "/etc/passwd", /'models\[0\]\.files\[0\]\.path'/],
        ["an id with a slash", (models) => models[0].id = "a/b", /'models\[0\]\.id'/],
        ["an unknown key", (models) => Object.assign(models[0], {sha: "x"}), /Unrecognized parameter: 'models\[0\]\.sha'/],
        ["a duplicate id", (models) => models[2].id = "tiny-chat", /'models\[2\]\.id' uses the name 'tiny-chat', already taken by models\[0\]\.id/],
        ["a duplicate alias", (models) => models[2].aliases = ["gpt-4o-mini"], /'gpt-4o-mini', already taken by models\[0\]\.aliases\[1\]/],
        ["an alias shadowing <family>-latest", (models) => models[1].aliases = ["tiny-latest"], /'tiny-latest' is reserved for the newest model of family 'tiny'/],
        ["two defaults for a task", (models) => models[2].default = true, /task 'chat' needs exactly one default model, found tiny-chat, tiny-extra/],
        ["no default for a task", (models) => models[1].default = false, /task 'embeddings' needs exactly one default model, found none/],
        ["a manifest path that is not a file of the model", (models) => models[0].manifest.path = "other.gguf", /'models\[0\]\.manifest\.path' \('other\.gguf'\) is not one of its files/],
        ["a manifest field the download sets itself", (models) => Object.assign(models[0].manifest, {id: "x"}), /'models\[0\]\.manifest\.id'/],
        ["a file listed twice", (models) => models[1].files.push({...models[1].files[0]}), /'models\[1\]\.files' lists a path twice/]
    ])("%s", (_name, edit, message) => {
        expect(attempt(edit)).toThrow(message);
    });

    it("a file that is not JSON, naming the file", () => {
        const file = path.join(dir, "bad.json");
        fs.writeFileSync(file, "{");
        expect(() => loadCatalogue(file)).toThrow(/^Invalid model catalogue .*bad\.json: /);
    });
});

describe("docs/models.md sizes", () => {
    const readme = fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../docs/models.md"), "utf8");
    const sizesOf = (entry: {files: {size: number | null}[]}) => entry.files.map((file) => file.size);

    it("every model's row shows the size --list and --dry-run print", () => {
        for (const entry of loadCatalogue()) {
            const row = readme.split("\n").find((line) => line.startsWith(`| \`${entry.id}\``));
            expect(row, entry.id).toBeDefined();
            expect(row!.split("|")[3].trim(), entry.id).toBe(sizeText(sizesOf(entry)));
        }
    });

    it("the download section's size is the default set's total, as --dry-run prints it", () => {
        const total = sizeText(loadCatalogue().filter((entry) => entry.default).flatMap(sizesOf));
        expect(readme).toContain(`npm run download-models      # fetch the default models (${total})`);
    });
});
