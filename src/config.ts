import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { capabilitySettings, type CapabilityConfig } from "./capabilities/capabilitySettings.js";
import { ConfigError, type Setting, type SettingValues, type SettingsTable } from "./settings/Setting.js";
import { joinNegativeValues } from "./settings/joinNegativeValues.js";
import { defaultsOf, flagOptions, readSettings } from "./settings/readSettings.js";
import { httpUrl, onOff, text } from "./settings/settingKinds.js";
import { serverSettings } from "./settings/serverSettings.js";

export { ConfigError } from "./settings/Setting.js";
export { defaultBodyMemory, defaultMemoryBudget, defaultVramBudget } from "./settings/serverSettings.js";

/**
 * Every setting the server reads from the outside world (flags and environment, both read only through
 * settings/readSettings.ts): the server's own table (settings/serverSettings.ts) and the rows each capability's manifest part adds
 * (`settings`, e.g. chat's `--draft-max`, transcription's `--max-audio-seconds`). A flag wins over its
 * environment variable, which wins over the default. `npm start -- --help` (usageText.ts) and
 * docs/configuration.md's table are written from these rows (test/unit/settingsTable.test.ts).
 */
export const settingsTable: SettingsTable = {...serverSettings, ...capabilitySettings};

export type Config = CapabilityConfig & {
    /** Model files and folders to serve instead of a manifest (`npm start -- a.gguf b/`); empty = the manifest. */
    modelPaths: string[];
};

/** Defaults, exported so tests and docs use the same numbers. */
export const defaultConfig: Config = {...defaultsOf(settingsTable) as CapabilityConfig, modelPaths: []};

/** Flags of `npm start` only, not settings of the server. */
export const startSettings = {
    download: onOff({flag: "download", help: "fetch the default models first (see npm run download-models -- --help)",
        docs: "`npm start`: fetch the default models first, see [docs/models.md](models.md)"}),
    allowUnverified: onOff({flag: "allow-unverified", help: "with --download: install files no sha256 is known for (default: refused)"})
};

/** What `npm start` was asked to do: serve with `config`, after fetching the default models when `download`. */
export type StartOptions = SettingValues<typeof startSettings> & {
    config: Config;
    /** Deprecated settings that were used, to be logged. */
    warnings: string[];
};

/** The server's settings; also accepts (and ignores) `--download`, so one command line parses everywhere. */
export function loadConfig(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Config {
    return loadStartOptions(argv, env).config;
}

export function loadStartOptions(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): StartOptions {
    const options = {...flagOptions(settingsTable), ...flagOptions(startSettings)};
    const {values, positionals} = parseFlags({args: joinNegativeValues(argv, options), allowPositionals: true, strict: true, options});
    const warnings: string[] = [];
    const settings = readSettings(settingsTable, values, env, warnings) as CapabilityConfig;
    const config: Config = {...settings, ...servedModels(settings.modelsConfig, positionals, values.models as string | undefined)};
    return {config, ...readSettings(startSettings, values, env), warnings};
}

/**
 * The manifest and the model paths to serve: `--models` naming a model file or folder (not a .json manifest,
 * nor a folder holding `models.json`) serves it, as paths given after `--` do; paths made absolute. A `.json` file
 * given after `--` is the manifest, as with `--models` (`npm start -- my-models.json`), when it is the only path given
 * and `--models` is not (a ConfigError otherwise: a manifest is not combined with other models).
 */
function servedModels(models: string, positionals: string[], modelsFlag: string | undefined) {
    const manifest = positionals.find(isManifestPath);
    if (manifest != null) {
        const others = positionals.filter((given) => given !== manifest);
        if (modelsFlag != null || others.length > 0)
            throw new ConfigError(`${manifest} is a model manifest, and one is served alone: give it as the only path ` +
                `(\`npm start -- ${manifest}\`, or \`--models ${manifest}\`), without ` +
                (modelsFlag != null ? `--models ${modelsFlag}` : others.join(" ")) + ".");
        return {modelsConfig: path.resolve(manifest), modelPaths: []};
    }
    const modelsIsPath = !isManifestPath(models) && !isFolderWithManifest(models);
    return {
        modelsConfig: path.resolve(modelsIsPath ? defaultConfig.modelsConfig : isFolderWithManifest(models) ? path.join(models, "models.json") : models),
        modelPaths: [...(modelsIsPath ? [models] : []), ...positionals].map((given) => path.resolve(given))
    };
}

/** A manifest is named by its extension: `.json` (a model is a `.gguf` file or a folder). */
function isManifestPath(given: string) {
    return given.toLowerCase().endsWith(".json");
}

function isFolderWithManifest(given: string) {
    try {
        return fs.statSync(given).isDirectory() && fs.existsSync(path.join(given, "models.json"));
    } catch {
        return false;
    }
}

/**
 * Where models are downloaded from. Kept out of Config because the server itself never talks to
 * the hub: only the downloader (`npm run download-models`, `npm start -- --download`) reads these.
 */
export const hubSettings = {
    /** Files are at `<hfEndpoint>/<repo>/resolve/<revision>/<file>`. */
    hfEndpoint: httpUrl({env: "HF_ENDPOINT", default: "https://huggingface.co", example: "https://huggingface.co",
        help: "hub or mirror (--download)", docs: "base URL of the Hugging Face hub or a mirror (the model downloader: `npm run download-models`, `npm start -- --download`)"}),
    /** Sent as `Authorization: Bearer` to the hub (never to the CDN it redirects to); null = anonymous. */
    hfToken: text<string | null>({env: "HF_TOKEN", default: null, help: "hub access token (--download)",
        docs: "access token for gated or private models (the model downloader; sent to the hub only, not to its CDN)"})
};

export type HubConfig = SettingValues<typeof hubSettings>;

const defaultHubConfig: HubConfig = defaultsOf(hubSettings);

export function loadHubConfig(env: NodeJS.ProcessEnv = process.env): HubConfig {
    return readSettings(hubSettings, {}, env);
}

/** Every setting, in the order `--help` and docs/configuration.md list them. */
export const allSettings: readonly Setting<unknown>[] = [settingsTable, startSettings, hubSettings].flatMap((table) => Object.values(table));

/** node's parseArgs, with its usage errors (unknown flag, missing value) turned into ConfigErrors. */
const parseFlags: typeof parseArgs = (options) => {
    try {
        return parseArgs(options);
    } catch (error) {
        throw new ConfigError(`${(error as Error).message}. See \`npm start -- --help\` for every flag and environment variable.`);
    }
};
