import type { CapabilityManifest } from "../capabilities/CapabilityManifest.js";
import { manifestParts } from "../capabilities/manifestParts.js";
import { recogniseModel } from "../capabilities/recogniseModel.js";
import type { CatalogueEntry, CatalogueFile } from "./CatalogueEntry.js";
import { connectionFailure } from "./connectionFailure.js";
import { DownloadError } from "./DownloadError.js";
import { hubUrl } from "./hubUrl.js";
import { visionRepoFiles } from "./visionRepoFiles.js";

/** One file of a hub repository's tree (`GET /api/models/{repo}/tree/{revision}?recursive=true`). */
export type HubTreeFile = {type: string, path: string, size?: number, lfs?: {oid: string, size: number} | null};

/** What `npm run download-models -- <spec>` names: a repository, and a quantisation or a file in it. */
export type HubSpec = {repo: string, quant: string | null, file: string | null, /** ONNX repositories: the model's dtype (default q8, else fp32). */ dtype?: string | null};

/** `owner/repo`, `owner/repo:Q4_K_M`, `owner/repo/path/to/file.gguf` (also with an `hf.co/` prefix, as Ollama takes it). */
export function parseHubSpec(spec: string): HubSpec | null {
    const bare = spec.replace(/^(https?:\/\/)?(hf\.co|huggingface\.co)\//, "");
    const match = /^([A-Za-z0-9][\w.-]*)\/([\w.-]+)(?::([\w.-]+)|\/(.+))?$/.exec(bare);
    if (match == null)
        return null;
    return {repo: `${match[1]}/${match[2]}`, quant: match[3] ?? null, file: match[4] ?? null};
}

const splitPart = /-(\d{5})-of-(\d{5})\.gguf$/i;
/** The default quantisation picked from a GGUF repository when none is named (as llama-server's `-hf`). */
const defaultQuant = "Q4_K_M";

/**
 * The files to fetch for `spec` from the repository's tree: a named file; the GGUF of a
 * quantisation (all the parts of a split GGUF); with neither, the default quantisation, or for an
 * ONNX repository its configuration and tokenizer files and one model file (quantized when there is
 * one), a Whisper export's encoder and decoder, a vision-language model's three networks (visionRepoFiles). Returns them and the path the manifest names. Pure.
 */
export function selectHubFiles(spec: HubSpec, tree: readonly HubTreeFile[]): {files: HubTreeFile[], manifestPath: string} {
    const files = tree.filter((entry) => entry.type === "file");
    if (spec.file != null) {
        const file = files.find((entry) => entry.path === spec.file);
        if (file == null)
            throw new DownloadError("notFound", `${spec.repo} has no file ${spec.file}.`);
        return {files: [file, ...splitSiblings(file, files)], manifestPath: file.path};
    }
    const ggufs = files.filter((entry) => entry.path.toLowerCase().endsWith(".gguf"));
    if (ggufs.length > 0 || spec.quant != null) {
        const quant = (spec.quant ?? defaultQuant).toLowerCase();
        const matching = ggufs.filter((entry) => {
            const name = entry.path.toLowerCase().replace(splitPart, ".gguf");
            return name.endsWith(`.${quant}.gguf`) || name.endsWith(`-${quant}.gguf`) || name.endsWith(`_${quant}.gguf`);
        });
        if (matching.length === 0)
            throw new DownloadError("notFound", `${spec.repo} has no ${spec.quant ?? defaultQuant} GGUF; it has: ` +
                `${ggufs.map((entry) => entry.path).join(", ") || "no GGUF at all"}. Name one with ${spec.repo}:<quantisation> or ${spec.repo}/<file>.`);
        const first = matching.find((entry) => !splitPart.test(entry.path) || /-00001-of-/i.test(entry.path)) ?? matching[0];
        return {files: [first, ...splitSiblings(first, matching)], manifestPath: first.path};
    }
    // A diffusers/optimum Stable Diffusion export (images): its pipeline's ONNX networks with their configs and the tokenizer.
    if (files.some((entry) => entry.path === "model_index.json"))
        return {files: files.filter((entry) => /^model_index\.json$|^(text_encoder|unet|vae_decoder)\/(model\.onnx(_data)?|config\.json)$|^(tokenizer|scheduler)\/[^/]+\.(json|txt)$/.test(entry.path)), manifestPath: "."};
    // A vision-language model (chat with images): its three networks in the dtype the vision engine loads, and its processor.
    const vision = visionRepoFiles(spec, files);
    if (vision != null)
        return {files: vision, manifestPath: "."};
    // A transformers.js repository (embeddings, speech, transcription): configuration, tokenizer, the model file(s) of the dtype, Kokoro's voices.
    const dtypeSuffix = {fp32: "", q8: "_quantized", fp16: "_fp16", int8: "_int8", uint8: "_uint8", q4: "_q4", q4f16: "_q4f16"}[spec.dtype ?? "q8"];
    if (dtypeSuffix == null)
        throw new DownloadError("usage", `Unknown --dtype '${spec.dtype}': fp32, q8, fp16, int8, uint8, q4 or q4f16.`);
    const config = files.filter((entry) => /^(config|tokenizer|tokenizer_config|special_tokens_map|preprocessor_config|generation_config)\.json$|^(vocab\.txt|vocab\.json|merges\.txt)$|^voices\/[^/]+\.bin$/.test(entry.path));
    // An encoder-decoder export (Whisper, transcription): the encoder and the merged decoder of the dtype, else of fp32.
    const pair = (suffix: string) => ["encoder_model", "decoder_model_merged"].map((name) => files.find((entry) => entry.path === `onnx/${name}${suffix}.onnx`));
    if (pair("").some((entry) => entry != null) || pair(dtypeSuffix).some((entry) => entry != null)) {
        const chosen = [pair(dtypeSuffix), ...(spec.dtype == null ? [pair("")] : [])].find((both) => both.every((entry) => entry != null));
        if (chosen == null)
            throw new DownloadError("notFound", `${spec.repo} has no ${spec.dtype ?? "q8"} pair onnx/encoder_model${dtypeSuffix}.onnx and onnx/decoder_model_merged${dtypeSuffix}.onnx.`);
        const data = files.filter((entry) => chosen.some((file) => entry.path === `${file!.path}_data`));
        return {files: [...config, ...chosen as HubTreeFile[], ...data], manifestPath: "."};
    }
    const onnxModels = files.filter((entry) => /^onnx\/model[\w]*\.onnx$/.test(entry.path)).map((entry) => entry.path);
    if (onnxModels.length === 0)
        throw new DownloadError("notFound", `${spec.repo} has neither a GGUF nor an ONNX model (onnx/model*.onnx); name a file with ${spec.repo}/<file>.`);
    // The dtype asked for (q8 by default, the smallest that keeps quality), else the full-precision model.
    const wanted = [`onnx/model${dtypeSuffix}.onnx`, ...(spec.dtype == null ? ["onnx/model.onnx"] : [])].find((name) => onnxModels.includes(name));
    if (wanted == null)
        throw new DownloadError("notFound", `${spec.repo} has no ${spec.dtype} model (onnx/model${dtypeSuffix}.onnx); it has: ${onnxModels.join(", ")}.`);
    const model = files.filter((entry) => entry.path === wanted || entry.path === `${wanted}_data`);
    return {files: [...config, ...model], manifestPath: "."};
}

function splitSiblings(first: HubTreeFile, candidates: readonly HubTreeFile[]): HubTreeFile[] {
    const match = splitPart.exec(first.path);
    if (match == null)
        return [];
    const stem = first.path.slice(0, match.index);
    return candidates.filter((entry) => entry !== first && entry.path.startsWith(stem) && splitPart.test(entry.path))
        .sort((a, b) => a.path.localeCompare(b.path));
}

/** What a repository's `config.json` says of its model (read only for a repository the hub gives no `pipeline_tag`). */
export type HubConfig = {architectures?: unknown, model_type?: unknown};

/**
 * The task a hub repository serves, by the capabilities' own rules (`recogniseModel`): its top-level marker
 * files (images: `model_index.json`), then its `pipeline_tag`, or without one its `config.json` (`architectures`,
 * `model_type`: a SmolVLM export is chat's); a GGUF nothing decides is chat's (any other GGUF).
 */
export function hubTask<Part extends CapabilityManifest>(repo: string, facts: {gguf: boolean, topFiles: readonly string[], pipelineTag: string | null, config?: HubConfig | null}, parts: readonly Part[]): Part["task"] {
    const markers = facts.topFiles.filter((file) => parts.some((part) => part.recognise?.folderFiles?.includes(file)));
    const architectures = Array.isArray(facts.config?.architectures) ? facts.config.architectures.filter((name): name is string => typeof name === "string") : undefined;
    const modelType = typeof facts.config?.model_type === "string" ? facts.config.model_type : undefined;
    const recognised = recogniseModel({gguf: facts.gguf, folderFiles: markers, pipelineTag: facts.pipelineTag ?? undefined, architectures, modelType}, parts);
    if ("refused" in recognised)
        throw new DownloadError("usage", `${repo} ${recognised.refused}`);
    return recognised.task;
}

/**
 * The repository as a catalogue entry (pinned to the commit the hub names for `revision`, sizes and
 * sha256s from the tree's LFS pointers), fetched from the hub's API.
 */
export async function hubRepoEntry(spec: HubSpec, hub: {hfEndpoint: string, hfToken: string | null}, fetchImpl: typeof fetch = fetch): Promise<CatalogueEntry> {
    const headers: Record<string, string> = hub.hfToken != null ? {Authorization: `Bearer ${hub.hfToken}`} : {};
    const api = async <T>(path: string): Promise<T> => {
        const response = await fetchImpl(`${hub.hfEndpoint}/api/models/${spec.repo}${path}`, {headers}).catch((error: Error) => {
            const host = new URL(hub.hfEndpoint).host;
            throw connectionFailure(error, host) ?? new DownloadError("network", `Cannot reach ${host} (${error.message}).`);
        });
        if (response.status === 401 || response.status === 403)
            throw new DownloadError("auth", `${spec.repo} needs an access token with its licence accepted: set HF_TOKEN.`);
        if (response.status === 404)
            throw new DownloadError("notFound", `${spec.repo} does not exist on ${hub.hfEndpoint} (or is private: set HF_TOKEN).`);
        if (!response.ok)
            throw new DownloadError("http", `The hub answered ${response.status} for ${spec.repo}.`, {retryable: response.status >= 500});
        return await response.json() as T;
    };
    const info = await api<{sha: string, pipeline_tag?: string}>("/revision/main");
    const tree = await api<HubTreeFile[]>(`/tree/${info.sha}?recursive=true`);
    const {files, manifestPath} = selectHubFiles(spec, tree);
    const gguf = manifestPath.toLowerCase().endsWith(".gguf");
    const topFiles = tree.filter((entry) => entry.type === "file" && !entry.path.includes("/")).map((entry) => entry.path);
    // No pipeline_tag: the repository's config.json tells what the model is (its architectures, model_type).
    const config = info.pipeline_tag == null && !gguf && topFiles.includes("config.json")
        ? await fetchImpl(hubUrl(hub.hfEndpoint, spec.repo, info.sha, "config.json"), {headers}).then((response) => response.ok ? response.json() as Promise<HubConfig> : null).catch(() => null)
        : null;
    const task = hubTask(spec.repo, {gguf, topFiles, pipelineTag: info.pipeline_tag ?? null, config}, manifestParts);
    // A manifest id: the file's (or repository's) name, lower case, characters an id cannot have as "-".
    const id = (gguf ? manifestPath.split("/").at(-1)!.replace(/(-00001-of-\d{5})?\.gguf$/i, "") : spec.repo.split("/")[1])
        .toLowerCase().replace(/[^a-z0-9._:+-]+/g, "-").replace(/^[^a-z0-9]+/, "");
    const catalogueFiles: CatalogueFile[] = files.map((file) => ({
        path: file.path,
        size: file.lfs?.size ?? file.size ?? null,
        sha256: file.lfs?.oid != null && /^[0-9a-f]{64}$/.test(file.lfs.oid) ? file.lfs.oid : null
    }));
    return {
        id, task, family: id, released: new Date().toISOString().slice(0, 10), licence: "see the repository",
        default: false, description: `${spec.repo} (${gguf ? manifestPath : "ONNX"})`, aliases: [], repo: spec.repo, revision: info.sha,
        files: catalogueFiles, manifest: {path: manifestPath}
    };
}
