// `npm run download-models`: fetches models from the Hugging Face hub into models/ and updates
// models/models.json. See `--help`.
import path from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, defaultConfig, loadHubConfig } from "../../src/config.js";
import { downloadModels } from "../../src/download/downloadModels.js";
import { DownloadError } from "../../src/download/DownloadError.js";
import { listCatalogue } from "../../src/download/listCatalogue.js";
import { loadCatalogue } from "../../src/download/loadCatalogue.js";
import { selectModels } from "../../src/download/selectModels.js";
import { hubRepoEntry, parseHubSpec } from "../../src/download/hubRepoEntry.js";

const usage = `Usage: npm run download-models -- [options] [owner/repo[:QUANT] | owner/repo/file.gguf ...]

With a hub repository: that model (any GGUF or ONNX repository, as llama-server's -hf and ollama pull
hf.co/... take them): owner/repo:Q4_K_M picks the GGUF of that quantisation (every part of a split
GGUF; Q4_K_M when none is named), owner/repo/file.gguf one file, an ONNX repository its configuration,
tokenizer and model files. Pinned to the repository's current commit, verified by the sha256s the hub
publishes, resumable, added to the manifest.

Without a repository: downloads the default models of the catalogue (or those picked with --only)
from the Hugging Face hub into the models folder, verifies their sha256, and adds them to the
manifest the server reads.

  --only <task|model>   a task (chat, embeddings, ...) picks its default model; a model id or
                        alias picks that model. Repeatable.
  --list                show the catalogue and what is installed
  --dry-run             show what would be downloaded, download nothing
  --dtype <dtype>       an ONNX repository's model: q8 (default, else fp32), fp32, fp16, int8, uint8, q4, q4f16
  --allow-unverified    install files that no sha256 is known for (neither pinned in the
                        catalogue nor announced by the hub); by default they are refused
  --models-dir <dir>    where model files go (default: the manifest's folder)
  --manifest <file>     manifest to create or update (default: ${defaultConfig.modelsConfig})
  -h, --help            this text

Environment: HF_ENDPOINT (hub or mirror base URL, default https://huggingface.co),
HF_TOKEN (access token for gated or private models).
An interrupted download resumes on the next run; a second run downloads nothing.`;

async function main(argv: string[]): Promise<number> {
    let values, positionals: string[];
    try {
        ({values, positionals} = parseArgs({args: argv, allowPositionals: true, strict: true, options: {
            only: {type: "string", multiple: true},
            list: {type: "boolean"},
            "dry-run": {type: "boolean"},
            "allow-unverified": {type: "boolean"},
            dtype: {type: "string"},
            "models-dir": {type: "string"},
            manifest: {type: "string"},
            // Not in --help: tests point the CLI at a catalogue of fixtures.
            catalogue: {type: "string"},
            help: {type: "boolean", short: "h"}
        }}));
    } catch (error) {
        process.stderr.write(`error: ${(error as Error).message}\n\n${usage}\n`);
        return 2;
    }
    if (values.help) {
        process.stdout.write(`${usage}\n`);
        return 0;
    }
    const manifestPath = path.resolve(values.manifest ?? defaultConfig.modelsConfig);
    const modelsDir = path.resolve(values["models-dir"] ?? path.dirname(manifestPath));
    try {
        const catalogue = loadCatalogue(...(values.catalogue != null ? [path.resolve(values.catalogue)] : []));
        if (values.list) {
            process.stdout.write(await listCatalogue(values.only != null ? selectModels(catalogue, values.only) : catalogue, modelsDir));
            return 0;
        }
        // Any hub repository (`owner/repo:Q4_K_M`, `owner/repo/file.gguf`, an ONNX `owner/repo`): pinned to its current commit.
        for (const given of positionals) {
            const spec = parseHubSpec(given);
            if (spec == null)
                throw new DownloadError("usage", `'${given}' is not a hub repository: write owner/repo, owner/repo:Q4_K_M or owner/repo/file.gguf.`);
            const entry = await hubRepoEntry({...spec, dtype: values.dtype ?? null}, loadHubConfig());
            await downloadModels({
                catalogue: [entry], modelsDir, manifestPath, only: [entry.id], dryRun: values["dry-run"] === true,
                hub: loadHubConfig(), out: process.stdout, allowUnverified: values["allow-unverified"] === true
            });
        }
        if (positionals.length > 0)
            return 0;
        await downloadModels({
            catalogue, modelsDir, manifestPath, only: values.only ?? [], dryRun: values["dry-run"] === true,
            hub: loadHubConfig(), out: process.stdout, allowUnverified: values["allow-unverified"] === true
        });
        return 0;
    } catch (error) {
        // Known failures carry an actionable message; anything else is a bug, whose stack LOG_LEVEL=debug shows.
        const known = error instanceof DownloadError || error instanceof ConfigError;
        process.stderr.write(`error: ${known || process.env.LOG_LEVEL !== "debug" ? (error as Error).message : (error as Error).stack}\n`);
        return error instanceof DownloadError && error.kind === "usage" ? 2 : 1;
    }
}

// Ctrl+C: finished files are installed, the current one stays as `.part` and resumes next time.
process.on("SIGINT", () => {
    process.stdout.write("\nInterrupted: run the same command again to resume.\n");
    process.exit(130);
});

process.exitCode = await main(process.argv.slice(2));
