import fs from "node:fs";
import path from "node:path";
import { ManifestError } from "../core/registry/ManifestError.js";
import type { CapabilityManifest } from "./CapabilityManifest.js";
import { manifestParts } from "./manifestParts.js";
import { recogniseModel, type ModelFacts } from "./recogniseModel.js";

/** One manifest entry made from a path: what `npm start -- <paths>` serves. */
export type PathModel = {id: string, task: string, path: string};

/** What a path may be, for a message: the marker files come from the capabilities' rules (images: model_index.json). */
function expected(parts: readonly CapabilityManifest[]) {
    const markers = parts.flatMap((part) => (part.recognise?.folderFiles ?? []).map((file) => `${file} for ${part.task}`));
    return `a .gguf file, an ONNX model folder (config.json${markers.map((marker) => `, or ${marker}`).join("")}), a folder holding such models, or a models.json manifest`;
}

/**
 * Manifest entries for model files and folders given on the command line, the task read from the
 * files by the capabilities' own rules (`ModelRecognition`, `recogniseModel`): a GGUF's pooling type and
 * `general.architecture`; an ONNX folder's marker file (images: `model_index.json`) or `config.json`
 * `architectures` and `model_type`; a folder of such models, each of them. The id is the file's
 * name without `.gguf`, or the folder's name.
 */
export async function manifestFromPaths(paths: readonly string[], parts: readonly CapabilityManifest[] = manifestParts): Promise<{models: PathModel[]}> {
    const models: PathModel[] = [];
    for (const given of paths)
        models.push(...await modelsAt(path.resolve(given), true, parts));
    // Ids as the manifest allows them: a name's other characters (spaces...) become "-".
    for (const model of models)
        model.id = model.id.replace(/[^A-Za-z0-9._:/+-]+/g, "-").replace(/^[^A-Za-z0-9]+/, "") || "model";
    const seen = new Map<string, number>();
    for (const model of models) {
        const count = (seen.get(model.id) ?? 0) + 1;
        seen.set(model.id, count);
        if (count > 1)
            model.id = `${model.id}-${count}`;
    }
    return {models};
}

async function modelsAt(target: string, named: boolean, parts: readonly CapabilityManifest[]): Promise<PathModel[]> {
    let stat: fs.Stats;
    try {
        stat = fs.statSync(target);
    } catch {
        throw new ManifestError(`${target} does not exist: expected ${expected(parts)}.`);
    }
    if (stat.isFile()) {
        if (target.toLowerCase().endsWith(".gguf"))
            return [await ggufModel(target, parts)];
        throw new ManifestError(`${target} is not a model: expected ${expected(parts)}.`);
    }
    const onnx = onnxTask(target, parts);
    if (onnx != null)
        return [{id: path.basename(target), task: onnx, path: target}];
    // A folder of models: its .gguf files and its model folders (one level down).
    const found: PathModel[] = [];
    for (const entry of fs.readdirSync(target, {withFileTypes: true}).sort((a, b) => a.name.localeCompare(b.name))) {
        const child = path.join(target, entry.name);
        if (entry.isFile() && entry.name.toLowerCase().endsWith(".gguf") && !/-0000[2-9]-of-|-000[1-9]\d-of-/.test(entry.name))
            found.push(await ggufModel(child, parts));
        else if (entry.isDirectory()) {
            const task = onnxTask(child, parts);
            if (task != null)
                found.push({id: entry.name, task, path: child});
        }
    }
    if (found.length === 0 && named)
        throw new ManifestError(`${target} holds no model: expected ${expected(parts)}.`);
    return found;
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

async function ggufModel(file: string, parts: readonly CapabilityManifest[]): Promise<PathModel> {
    const {readGgufFileInfo} = await import("node-llama-cpp");
    let metadata: Record<string, unknown>;
    try {
        metadata = (await readGgufFileInfo(file, {readTensorInfo: false, logWarnings: false})).metadata as Record<string, unknown>;
    } catch (error) {
        throw new ManifestError(`${file} is not a readable GGUF file: ${(error as Error).message.split("\n")[0]}`);
    }
    const architecture = String((metadata.general as {architecture?: unknown} | undefined)?.architecture ?? "");
    const pooling = (metadata[architecture] as {pooling_type?: unknown} | undefined)?.pooling_type;
    const recognised = recogniseModel({gguf: true, ggufArchitecture: architecture || undefined, ggufPoolingType: typeof pooling === "number" ? pooling : undefined}, parts);
    if ("refused" in recognised)
        throw new ManifestError(`${file} ${recognised.refused}`);
    return {id: path.basename(file).replace(/(-00001-of-\d{5})?\.gguf$/i, ""), task: recognised.task, path: file};
}
