import fs from "node:fs";
import path from "node:path";
import { ManifestError } from "../core/registry/ManifestError.js";

/** One manifest entry made from a path: what `npm start -- <paths>` serves. */
export type PathModel = {id: string, task: string, path: string};

/** GGUF architectures that are embedding models (no causal head): served by /v1/embeddings. */
const embeddingArchitectures = new Set(["bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3", "t5encoder", "modern-bert", "neo-bert", "eurobert"]);
/** ONNX `config.json` `model_type`s the embeddings capability serves. */
const embeddingModelTypes = new Set(["bert", "roberta", "xlm-roberta", "distilbert", "mpnet", "nomic_bert", "modernbert", "e5", "electra", "deberta-v2"]);
const speechModelTypes = new Set(["vits", "style_text_to_speech_2", "kokoro"]);
const transcriptionModelTypes = new Set(["whisper"]);

const expected = "a .gguf file, an ONNX model folder (config.json, or model_index.json for images), a folder holding such models, or a models.json manifest";

/**
 * Manifest entries for model files and folders given on the command line, the task read from the
 * files: a GGUF's `general.architecture` and pooling type (embedding architectures and pooled
 * models: embeddings; others: chat); an ONNX folder's `model_index.json` (images) or `config.json`
 * `model_type` (embeddings or speech); a folder of such models, each of them. The id is the file's
 * name without `.gguf`, or the folder's name.
 */
export async function manifestFromPaths(paths: readonly string[]): Promise<{models: PathModel[]}> {
    const models: PathModel[] = [];
    for (const given of paths)
        models.push(...await modelsAt(path.resolve(given), true));
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

async function modelsAt(target: string, named: boolean): Promise<PathModel[]> {
    let stat: fs.Stats;
    try {
        stat = fs.statSync(target);
    } catch {
        throw new ManifestError(`${target} does not exist: expected ${expected}.`);
    }
    if (stat.isFile()) {
        if (target.toLowerCase().endsWith(".gguf"))
            return [await ggufModel(target)];
        throw new ManifestError(`${target} is not a model: expected ${expected}.`);
    }
    const onnx = onnxTask(target);
    if (onnx != null)
        return [{id: path.basename(target), task: onnx, path: target}];
    // A folder of models: its .gguf files and its model folders (one level down).
    const found: PathModel[] = [];
    for (const entry of fs.readdirSync(target, {withFileTypes: true}).sort((a, b) => a.name.localeCompare(b.name))) {
        const child = path.join(target, entry.name);
        if (entry.isFile() && entry.name.toLowerCase().endsWith(".gguf") && !/-0000[2-9]-of-|-000[1-9]\d-of-/.test(entry.name))
            found.push(await ggufModel(child));
        else if (entry.isDirectory() && onnxTask(child) != null)
            found.push({id: entry.name, task: onnxTask(child)!, path: child});
    }
    if (found.length === 0 && named)
        throw new ManifestError(`${target} holds no model: expected ${expected}.`);
    return found;
}

function onnxTask(folder: string): string | null {
    if (fs.existsSync(path.join(folder, "model_index.json")))
        return "image";
    const configFile = path.join(folder, "config.json");
    if (!fs.existsSync(configFile))
        return null;
    let modelType: unknown;
    try {
        modelType = (JSON.parse(fs.readFileSync(configFile, "utf8")) as {model_type?: unknown}).model_type;
    } catch (error) {
        throw new ManifestError(`${configFile} is not valid JSON: ${(error as Error).message}`);
    }
    if (typeof modelType === "string" && embeddingModelTypes.has(modelType))
        return "embeddings";
    if (typeof modelType === "string" && speechModelTypes.has(modelType))
        return "speech";
    if (typeof modelType === "string" && transcriptionModelTypes.has(modelType))
        return "transcription";
    throw new ManifestError(`${folder}: its config.json says model_type ${JSON.stringify(modelType)}, which no capability serves ` +
        `(embeddings: ${[...embeddingModelTypes].join(", ")}; speech: ${[...speechModelTypes].join(", ")}; transcription: whisper; images: a model_index.json). ` +
        "Write a models.json manifest to name its task.");
}

async function ggufModel(file: string): Promise<PathModel> {
    const {readGgufFileInfo} = await import("node-llama-cpp");
    let metadata: Record<string, unknown>;
    try {
        metadata = (await readGgufFileInfo(file, {readTensorInfo: false, logWarnings: false})).metadata as Record<string, unknown>;
    } catch (error) {
        throw new ManifestError(`${file} is not a readable GGUF file: ${(error as Error).message.split("\n")[0]}`);
    }
    const architecture = String((metadata.general as {architecture?: unknown} | undefined)?.architecture ?? "");
    const pooling = (metadata[architecture] as {pooling_type?: unknown} | undefined)?.pooling_type;
    const embeddings = embeddingArchitectures.has(architecture) || (typeof pooling === "number" && pooling > 0);
    return {id: path.basename(file).replace(/(-00001-of-\d{5})?\.gguf$/i, ""), task: embeddings ? "embeddings" : "chat", path: file};
}
