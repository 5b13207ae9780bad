import fs from "node:fs";
import path from "node:path";
import { ManifestError } from "../core/registry/ManifestError.js";
import { readGgufKeys, type GgufScalar } from "../runtimes/llama/readGgufKeys.js";
import type { CapabilityManifest } from "./CapabilityManifest.js";
import { manifestParts } from "./manifestParts.js";
import { recogniseModel, type ModelFacts } from "./recogniseModel.js";

/** One manifest entry made from a path: what `npm start -- <paths>` serves. */
export type PathModel = {id: string, task: string, path: string};

/** A model that could not have its own name (`name`), held by the model at `holder`: it is served as `id`, for the log to say. */
export type RenamedModel = {id: string, name: string, path: string, holder: string};

/** What a path may be, for a message: the marker files come from the capabilities' rules (images: model_index.json). */
function expected(parts: readonly CapabilityManifest[]) {
    const markers = parts.flatMap((part) => (part.recognise?.folderFiles ?? []).map((file) => `${file} for ${part.task}`));
    return `a .gguf file, an ONNX model folder (config.json${markers.map((marker) => `, or ${marker}`).join("")}), a folder holding such models, or a models.json manifest`;
}

/** A file or folder met while scanning a folder that is not served, and why (a path given by name is an error instead). */
export type SkippedPath = {path: string, reason: string};

/** How many levels of folders below a given folder are read (LM Studio's publisher/repo/file.gguf is 2, a hub cache's models--org--name/snapshots/hash/ 3). */
export const maxScanDepth = 3;
/** Folders read at most per given folder: pointing at a home folder by mistake ends quickly, with a warning. */
const maxScannedFolders = 2_000;

/**
 * Manifest entries for model files and folders given on the command line, the task read from the
 * files by the capabilities' own rules (`ModelRecognition`, `recogniseModel`): a GGUF's pooling type and
 * `general.architecture`; an ONNX folder's marker file (images: `model_index.json`) or `config.json`
 * `architectures` and `model_type`; a folder of such models, each of them, found down to `maxScanDepth` levels of
 * folders below it (hidden folders skipped, each real folder read once). A file or folder reached twice (a folder
 * and a file in it, two spellings or links of one path) is one model, by its real path: the first found. The id is
 * the file's name without `.gguf`, or the folder's name (see {@link uniqueIds}). A path given by name that is not a
 * model is an error; one found by scanning is `skipped`, with why. Only headers are read: nothing is loaded.
 */
export function manifestFromPaths(paths: readonly string[], parts: readonly CapabilityManifest[] = manifestParts): {models: PathModel[], skipped: SkippedPath[], renamed: RenamedModel[]} {
    const found: PathModel[] = [];
    const skipped: SkippedPath[] = [];
    for (const given of paths)
        found.push(...modelsAt(path.resolve(given), parts, skipped));
    const real = new Set<string>();
    const models = found.filter((model) => {
        const file = fs.realpathSync.native(model.path);
        if (real.has(file))
            return false;
        real.add(file);
        return true;
    });
    return {models, skipped, renamed: uniqueIds(models)};
}

/** The longest id the manifest takes. */
const maxIdLength = 200;

/**
 * Gives each model an id the manifest takes (a name's other characters, such as spaces, become "-"; at most
 * `maxIdLength` characters) and no other model has: models with the same name get the first of `-2`, `-3`, ... that
 * is nobody's name, in the order found, never a name a model has of its own (a file named `x-2.gguf` keeps `x-2`
 * wherever it is found, so the second `x` is `x-3`). Returns the models renamed so.
 */
function uniqueIds(models: PathModel[]): RenamedModel[] {
    const names = models.map((model) => model.id.replace(/[^A-Za-z0-9._:/+-]+/g, "-").replace(/^[^A-Za-z0-9]+/, "").slice(0, maxIdLength) || "model");
    const taken = new Set(names);
    const holders = new Map<string, string>();
    const renamed: RenamedModel[] = [];
    models.forEach((model, index) => {
        const name = names[index];
        const holder = holders.get(name);
        if (holder == null) {
            holders.set(name, model.path);
            model.id = name;
            return;
        }
        let count = 2;
        while (taken.has(suffixed(name, count)))
            count++;
        model.id = suffixed(name, count);
        taken.add(model.id);
        renamed.push({id: model.id, name, path: model.path, holder});
    });
    return renamed;
}

/** `name-count`, the name shortened to keep it within `maxIdLength`. */
function suffixed(name: string, count: number) {
    const suffix = `-${count}`;
    return name.slice(0, maxIdLength - suffix.length) + suffix;
}

/** The models at a path given by name: a GGUF file, an ONNX model folder, or a folder scanned for them. */
function modelsAt(target: string, parts: readonly CapabilityManifest[], skipped: SkippedPath[]): PathModel[] {
    let stat: fs.Stats;
    try {
        stat = fs.statSync(target);
    } catch {
        throw new ManifestError(`${target} does not exist: expected ${expected(parts)}.`);
    }
    if (stat.isFile()) {
        if (target.toLowerCase().endsWith(".gguf"))
            return [ggufModel(target, parts)];
        throw new ManifestError(`${target} is not a model: expected ${expected(parts)}.`);
    }
    const onnx = onnxTask(target, parts);
    if (onnx != null)
        return [{id: path.basename(target), task: onnx, path: target}];
    const scan = {found: [] as PathModel[], skipped: [] as SkippedPath[], folders: new Set<string>()};
    scanFolder(target, 0, parts, scan);
    skipped.push(...scan.skipped);
    if (scan.found.length === 0)
        throw new ManifestError(`${target} holds no model: expected ${expected(parts)}` +
            (scan.skipped.length > 0 ? `; skipped ${scan.skipped.map((entry) => `${entry.path} (${entry.reason})`).join(", ")}.` : "."));
    return scan.found;
}

/** Adds the models in `folder` and in its folders below (depth-first, by name) to `scan`. */
function scanFolder(folder: string, depth: number, parts: readonly CapabilityManifest[], scan: {found: PathModel[], skipped: SkippedPath[], folders: Set<string>}) {
    const real = fs.realpathSync.native(folder);
    if (scan.folders.has(real))
        return; // a link back to a folder already read
    if (scan.folders.size >= maxScannedFolders) {
        if (!scan.skipped.some((entry) => entry.reason.startsWith("not read:")))
            scan.skipped.push({path: folder, reason: `not read: more than ${maxScannedFolders} folders scanned; name the models' folder instead`});
        return;
    }
    scan.folders.add(real);
    let entries: fs.Dirent[];
    try {
        // By name in one fixed collation, not the machine's locale: the same folder is read in the same order everywhere.
        entries = fs.readdirSync(folder, {withFileTypes: true}).sort((a, b) => a.name.localeCompare(b.name, "en"));
    } catch (error) {
        scan.skipped.push({path: folder, reason: `not readable: ${(error as Error).message}`});
        return;
    }
    for (const entry of entries) {
        if (entry.name.startsWith("."))
            continue;
        const child = path.join(folder, entry.name);
        const kind = entry.isSymbolicLink() ? statKind(child) : entry.isFile() ? "file" : entry.isDirectory() ? "folder" : null;
        try {
            if (kind === "file" && entry.name.toLowerCase().endsWith(".gguf") && !/-0000[2-9]-of-|-000[1-9]\d-of-/.test(entry.name))
                scan.found.push(ggufModel(child, parts));
            else if (kind === "folder") {
                const task = onnxTask(child, parts);
                if (task != null)
                    scan.found.push({id: entry.name, task, path: child});
                else if (depth < maxScanDepth)
                    scanFolder(child, depth + 1, parts, scan);
            }
        } catch (error) {
            if (!(error instanceof ManifestError))
                throw error;
            scan.skipped.push({path: child, reason: error.message.startsWith(child) ? error.message.slice(child.length).trim() : error.message});
        }
    }
}

/** What a symbolic link leads to: a file, a folder, or nothing (a broken link). */
function statKind(target: string): "file" | "folder" | null {
    try {
        const stat = fs.statSync(target);
        return stat.isFile() ? "file" : stat.isDirectory() ? "folder" : null;
    } catch {
        return null;
    }
}

/** The task of an ONNX model folder; null when the folder is not one (no config.json nor marker file). */
function onnxTask(folder: string, parts: readonly CapabilityManifest[]): string | null {
    const markers = parts.flatMap((part) => part.recognise?.folderFiles ?? []).filter((file) => fs.existsSync(path.join(folder, file)));
    const configFile = path.join(folder, "config.json");
    const hasConfig = fs.existsSync(configFile);
    if (markers.length === 0 && !hasConfig)
        return null;
    let config: {model_type?: unknown, architectures?: unknown} = {};
    if (markers.length === 0) {
        try {
            config = JSON.parse(fs.readFileSync(configFile, "utf8")) as typeof config;
        } catch (error) {
            throw new ManifestError(`${configFile} is not valid JSON: ${(error as Error).message}`);
        }
    }
    const facts: ModelFacts = {
        gguf: false,
        folderFiles: markers,
        architectures: Array.isArray(config.architectures) ? config.architectures.filter((name) => typeof name === "string") : undefined,
        modelType: typeof config.model_type === "string" ? config.model_type : undefined
    };
    const recognised = recogniseModel(facts, parts);
    if ("refused" in recognised)
        throw new ManifestError(`${folder} ${recognised.refused}`);
    return recognised.task;
}

function ggufModel(file: string, parts: readonly CapabilityManifest[]): PathModel {
    let metadata: ReadonlyMap<string, GgufScalar>;
    try {
        // Only the two keys recognition asks: general.architecture, then <architecture>.pooling_type.
        metadata = readGgufKeys(file, (key) => key === "general.architecture" || key.endsWith(".pooling_type"),
            (found) => found.has("general.architecture") && found.has(`${String(found.get("general.architecture"))}.pooling_type`));
    } catch (error) {
        throw new ManifestError(`${file} is not a readable GGUF file: ${(error as Error).message.split("\n")[0]}`);
    }
    const architecture = String(metadata.get("general.architecture") ?? "");
    const pooling = metadata.get(`${architecture}.pooling_type`);
    const recognised = recogniseModel({gguf: true, ggufArchitecture: architecture || undefined, ggufPoolingType: typeof pooling === "number" ? pooling : undefined}, parts);
    if ("refused" in recognised)
        throw new ManifestError(`${file} ${recognised.refused}`);
    return {id: path.basename(file).replace(/(-00001-of-\d{5})?\.gguf$/i, ""), task: recognised.task, path: file};
}
