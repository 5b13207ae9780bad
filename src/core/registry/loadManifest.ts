import fs from "node:fs";
import path from "node:path";
import { createAjv } from "../validation/createAjv.js";
import { describeAjvError } from "../validation/describeAjvError.js";
import { ManifestError } from "./ManifestError.js";
import { ManifestFieldError } from "./ManifestFieldError.js";
import { parseKeepAlive } from "../../settings/keepAlive.js";
import { commonModelProperties, manifestSchema } from "./manifestSchema.js";
import type { ManifestSettings } from "./ManifestSettings.js";
import type { ModelEntry } from "./ModelEntry.js";

type RawModel = {
    id: string, task: string, path: string, family?: string, released?: string, aliases?: string[],
    ownedBy?: string, contextSize?: number, threads?: number, parallel?: number, workers?: number,
    preload?: boolean, keepAlive?: string | number, pin?: boolean
} & Record<string, unknown>;

/**
 * Reads and validates a model manifest. Every problem that would otherwise surface on the first
 * request (bad field, a field of another task, duplicate name, missing file) is a ManifestError
 * naming the file and field. `settingsByTask`: each served task's own fields (its capability's).
 */
export function loadManifest(manifestPath: string, settingsByTask: Readonly<Record<string, ManifestSettings<unknown> | undefined>>): ModelEntry[] {
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
        const hint = text.startsWith("GGUF") ? " (it is a GGUF model file: serve it with `npm start -- <file.gguf>`)" : "";
        throw new ManifestError(`Model manifest ${manifestPath} is not valid JSON${hint}: ${(error as Error).message}`);
    }
    // A model folder's config.json given where a manifest goes (`npm start -- folder/config.json`).
    if (data != null && typeof data === "object" && !("models" in data) && ("model_type" in data || "architectures" in data))
        throw new ManifestError(`Model manifest ${manifestPath} is a model's configuration, not a manifest (it has no 'models' list): ` +
            `serve its folder with \`npm start -- ${path.dirname(manifestPath)}\`.`);
    return parseManifest(data, {file: manifestPath}, settingsByTask);
}

/**
 * Where a manifest comes from, as its errors name it: a file (`Invalid model manifest <file>: 'models[2].id' ...`;
 * relative paths are taken from its folder), or the model paths given on the command line, which no file holds (an
 * entry is named by its path: `... the 'id' of <path> ...`; relative paths are taken from the working folder).
 */
export type ManifestSource = {file: string} | {commandLine: true};

/**
 * Validates a manifest's parsed content: the same checks whether it came from a file or was made from model paths
 * (`source` says which, for its errors).
 */
export function parseManifest(data: unknown, source: ManifestSource, settingsByTask: Readonly<Record<string, ManifestSettings<unknown> | undefined>>): ModelEntry[] {
    const file = "file" in source ? source.file : null;
    const invalidManifest = file != null ? `Invalid model manifest ${file}` : "Cannot serve the models given on the command line";
    // A field of an entry: 'models[2].id' (models[2].id where a message names a second one), or the 'id' of <path>.
    const fieldOf = (index: number, field: string, quoted = true) => file == null
        ? `the '${field}' of ${String((data as {models?: {path?: unknown}[]}).models?.[index]?.path)}`
        : quoted ? `'models[${index}].${field}'` : `models[${index}].${field}`;
    const validate = createAjv().compile(manifestSchema(settingsByTask));
    if (!validate(data)) {
        const {message} = describeAjvError(validate.errors?.[0], data);
        throw new ManifestError(`${invalidManifest}: ${message}`);
    }

    if ((data as {models: unknown[]}).models.length === 0)
        throw new ManifestError(`${file != null ? `Model manifest ${file} lists no models` : "No model was given on the command line"}: ` +
            "add one, or serve model files directly with `npm start -- <model.gguf or folder>`.");
    const folder = file != null ? path.dirname(path.resolve(file)) : process.cwd();
    const entries = (data as {models: RawModel[]}).models.map((model, index): ModelEntry => {
        const invalid = (field: string, message: string) => new ManifestError(`${invalidManifest}: ${fieldOf(index, field)} ${message}`);
        const own = settingsByTask[model.task];
        const taskFields: Record<string, unknown> = {};
        for (const [field, value] of Object.entries(model)) {
            if (field in commonModelProperties || field === "task" || value === undefined)
                continue;
            if (own == null || !(field in own.properties)) {
                const owners = Object.entries(settingsByTask).filter(([, settings]) => settings != null && field in settings.properties).map(([task]) => `"${task}"`);
                throw invalid(field, `applies only to models with task ${owners.join(" or ")}.`);
            }
            taskFields[field] = value;
        }
        const modelPath = path.resolve(folder, model.path);
        if (!fs.existsSync(modelPath))
            throw invalid("path", `points to ${modelPath}, which does not exist.`);
        const keepAliveMs = model.keepAlive == null ? undefined : parseKeepAlive(model.keepAlive);
        if (model.keepAlive != null && keepAliveMs === undefined)
            throw invalid("keepAlive", `must be "forever", a number of seconds, or a duration such as "30s", "5m" or "2h"; got ${JSON.stringify(model.keepAlive)}.`);
        let settings: unknown = {};
        try {
            settings = own?.parse(taskFields, {id: model.id, path: modelPath, folder}) ?? {};
        } catch (error) {
            if (error instanceof ManifestFieldError)
                throw invalid(error.field, error.message);
            throw error;
        }
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
            ...(model.workers != null ? {workers: model.workers} : {}),
            ...(model.preload != null ? {preload: model.preload} : {}),
            ...(keepAliveMs !== undefined ? {keepAliveMs} : {}),
            ...(model.pin != null ? {pin: model.pin} : {}),
            settings
        };
    });

    assertUniqueNames(entries, invalidManifest, fieldOf);
    return entries;
}

/**
 * Every name a client can send (ids, aliases, `<family>-latest`) must resolve to exactly one model. `invalidManifest`
 * begins an error, `fieldOf` names an entry's field (unquoted: the one that took the name first).
 */
function assertUniqueNames(entries: ModelEntry[], invalidManifest: string, fieldOf: (index: number, field: string, quoted?: boolean) => string) {
    const owner = new Map<string, string>();
    const claim = (name: string, index: number, field: string) => {
        const previous = owner.get(name);
        if (previous != null)
            throw new ManifestError(`${invalidManifest}: ${fieldOf(index, field)} uses the name '${name}', already taken by ${previous}.`);
        owner.set(name, fieldOf(index, field, false));
    };
    entries.forEach((entry, index) => claim(entry.id, index, "id"));
    entries.forEach((entry, index) => entry.aliases.forEach((alias, aliasIndex) => claim(alias, index, `aliases[${aliasIndex}]`)));
    const families = new Set(entries.map((entry) => entry.family).filter((family) => family != null));
    for (const family of families) {
        const latest = `${family}-latest`;
        if (owner.has(latest))
            throw new ManifestError(`${invalidManifest}: the name '${latest}' is reserved for the newest model of family '${family}', but ${owner.get(latest)} uses it.`);
    }
}
