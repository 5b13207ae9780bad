import fs from "node:fs";
import path from "node:path";
import { createAjv } from "../core/validation/createAjv.js";
import { describeAjvError } from "../core/validation/describeAjvError.js";
import { manifestSchema } from "./manifestSchema.js";
import { ManifestError } from "./ManifestError.js";
import type { Pooling } from "../capabilities/embeddings/onnx/pooling.js";
import type { EmbeddingSettings, ModelEntry, ModelTask } from "./ModelEntry.js";

const validateManifest = createAjv().compile(manifestSchema);

type RawModel = {
    id: string, task: ModelTask, path: string, family?: string, released?: string, aliases?: string[],
    ownedBy?: string, contextSize?: number, threads?: number, parallel?: number,
    maxInputTokens?: number, pooling?: Pooling, normalize?: boolean, matryoshka?: boolean | number[], dtype?: string, onnxFile?: string
};

const embeddingFields = ["maxInputTokens", "pooling", "normalize", "matryoshka", "dtype", "onnxFile"] as const;

/**
 * Reads and validates a model manifest. Every problem that would otherwise surface on the first
 * request (bad field, duplicate name, missing file) is a ManifestError naming the file and field.
 */
export function loadManifest(manifestPath: string): ModelEntry[] {
    let text: string;
    try {
        text = fs.readFileSync(manifestPath, "utf8");
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT")
            throw new ManifestError(`Model manifest not found: ${manifestPath}`);
        throw new ManifestError(`Cannot read model manifest ${manifestPath}: ${(error as Error).message}`);
    }

    let data: unknown;
    try {
        data = JSON.parse(text);
    } catch (error) {
        throw new ManifestError(`Model manifest ${manifestPath} is not valid JSON: ${(error as Error).message}`);
    }

    if (!validateManifest(data)) {
        const {message} = describeAjvError(validateManifest.errors?.[0], data);
        throw new ManifestError(`Invalid model manifest ${manifestPath}: ${message}`);
    }

    const raw = (data as {models: RawModel[]}).models;
    const folder = path.dirname(path.resolve(manifestPath));
    const entries = raw.map((model, index): ModelEntry => {
        const misplaced = embeddingFields.find((field) => model.task !== "embeddings" && model[field] != null);
        if (misplaced != null)
            throw new ManifestError(`Invalid model manifest ${manifestPath}: 'models[${index}].${misplaced}' applies only to models with task "embeddings".`);
        const modelPath = path.resolve(folder, model.path);
        if (!fs.existsSync(modelPath))
            throw new ManifestError(`Invalid model manifest ${manifestPath}: 'models[${index}].path' points to ${modelPath}, which does not exist.`);
        return {
            id: model.id,
            task: model.task,
            path: modelPath,
            family: model.family ?? null,
            released: model.released ?? null,
            aliases: model.aliases ?? [],
            ownedBy: model.ownedBy ?? "local",
            contextSize: model.contextSize ?? null,
            threads: model.threads ?? null,
            parallel: model.parallel ?? null,
            ...(model.task === "embeddings" ? {embedding: embeddingSettings(model, modelPath, index, manifestPath)} : {})
        };
    });

    assertUniqueNames(entries, manifestPath);
    return entries;
}

function embeddingSettings(model: RawModel, modelPath: string, index: number, manifestPath: string): EmbeddingSettings {
    if (modelPath.endsWith(".gguf"))
        for (const field of ["pooling", "dtype", "onnxFile"] as const)
            if (model[field] != null)
                throw new ManifestError(`Invalid model manifest ${manifestPath}: 'models[${index}].${field}' does not apply to a GGUF model ` +
                    "(llama.cpp pools as the GGUF itself says); leave it out.");
    if (model.onnxFile != null && model.dtype != null)
        throw new ManifestError(`Invalid model manifest ${manifestPath}: 'models[${index}].onnxFile' names the file itself; leave out 'dtype'.`);
    return {
        maxInputTokens: model.maxInputTokens ?? null,
        pooling: model.pooling ?? "mean",
        normalize: model.normalize ?? true,
        matryoshka: model.matryoshka ?? false,
        dtype: model.dtype ?? null,
        onnxFile: model.onnxFile ?? null
    };
}

/** Every name a client can send (ids, aliases, `<family>-latest`) must resolve to exactly one model. */
function assertUniqueNames(entries: ModelEntry[], manifestPath: string) {
    const owner = new Map<string, string>();
    const claim = (name: string, field: string) => {
        const previous = owner.get(name);
        if (previous != null)
            throw new ManifestError(`Invalid model manifest ${manifestPath}: '${field}' uses the name '${name}', already taken by ${previous}.`);
        owner.set(name, field);
    };
    entries.forEach((entry, index) => claim(entry.id, `models[${index}].id`));
    entries.forEach((entry, index) => entry.aliases.forEach((alias, aliasIndex) => claim(alias, `models[${index}].aliases[${aliasIndex}]`)));
    const families = new Set(entries.map((entry) => entry.family).filter((family) => family != null));
    for (const family of families) {
        const latest = `${family}-latest`;
        if (owner.has(latest))
            throw new ManifestError(`Invalid model manifest ${manifestPath}: the name '${latest}' is reserved for the newest model of family '${family}', but ${owner.get(latest)} uses it.`);
    }
}
