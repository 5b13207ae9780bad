import fs from "node:fs";
import path from "node:path";
import { createAjv } from "../core/validation/createAjv.js";
import { describeAjvError } from "../core/validation/describeAjvError.js";
import type { CatalogueEntry } from "./CatalogueEntry.js";
import { catalogueSchema } from "./catalogueSchema.js";
import { DownloadError } from "./DownloadError.js";
import { projectRoot } from "../projectRoot.js";

const validateCatalogue = createAjv().compile(catalogueSchema);

/** The catalogue shipped with the repo; tests pass their own. */
const defaultCataloguePath = path.join(projectRoot, "scripts", "download-models", "catalogue.json");

/**
 * Reads and validates the download catalogue: the schema, then what a schema cannot say (unique
 * ids and names, one default model per task, the manifest path being one of the model's files).
 * Every problem is a DownloadError of kind `catalogue` naming the file and the entry.
 */
export function loadCatalogue(file: string = defaultCataloguePath): CatalogueEntry[] {
    const fail = (message: string): never => {
        throw new DownloadError("catalogue", `Invalid model catalogue ${file}: ${message}`);
    };
    let data: unknown;
    try {
        data = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (error) {
        return fail((error as Error).message);
    }
    if (!validateCatalogue(data))
        return fail(describeAjvError(validateCatalogue.errors?.[0], data).message);

    const entries = (data as {models: CatalogueEntry[]}).models;
    // Every name a client may send must resolve to one model once these are all in one manifest.
    const owner = new Map<string, string>();
    const claim = (name: string, by: string) => {
        if (owner.has(name))
            fail(`'${by}' uses the name '${name}', already taken by ${owner.get(name)}.`);
        owner.set(name, by);
    };
    entries.forEach((entry, index) => claim(entry.id, `models[${index}].id`));
    entries.forEach((entry, index) => entry.aliases.forEach((alias, at) => claim(alias, `models[${index}].aliases[${at}]`)));
    for (const family of new Set(entries.map((entry) => entry.family)))
        if (owner.has(`${family}-latest`))
            fail(`the name '${family}-latest' is reserved for the newest model of family '${family}', but ${owner.get(`${family}-latest`)} uses it.`);

    for (const task of new Set(entries.map((entry) => entry.task))) {
        const defaults = entries.filter((entry) => entry.task === task && entry.default).map((entry) => entry.id);
        if (defaults.length !== 1)
            fail(`task '${task}' needs exactly one default model, found ${defaults.length === 0 ? "none" : defaults.join(", ")}.`);
    }

    entries.forEach((entry, index) => {
        const paths = entry.files.map((file) => file.path);
        if (new Set(paths).size !== paths.length)
            fail(`'models[${index}].files' lists a path twice.`);
        for (const key of ["id", "task", "family", "released", "aliases", "description"])
            if (key in entry.manifest)
                fail(`'models[${index}].manifest.${key}' is written from the entry's own '${key}'; remove it.`);
        const target = entry.manifest.path;
        if (target !== "." && !paths.some((path) => path === target || path.startsWith(`${target}/`)))
            fail(`'models[${index}].manifest.path' ('${target}') is not one of its files (or a folder of them).`);
    });
    return entries;
}
