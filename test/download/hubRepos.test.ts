import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { downloadModels } from "../../src/download/downloadModels.js";
import { hubRepoEntry, parseHubSpec, selectHubFiles } from "../../src/download/hubRepoEntry.js";
import { loadServedManifest } from "../../src/capabilities/loadServedManifest.js";
import { FakeHub, fixture } from "./fakeHub.js";
import { collect } from "./fixtures.js";

// `npm run download-models -- owner/repo:Q4_K_M`: any hub repository, against the loopback stand-in hub's API.
const revision = randomBytes(20).toString("hex");
const q4 = fixture(120_000);
const q8 = fixture(200_000);
const partOne = fixture(90_000);
const partTwo = fixture(70_000);
const onnx = fixture(50_000);
const config = Buffer.from(JSON.stringify({model_type: "bert"}));

let hub: FakeHub;
let dir: string;
beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-download-hub-"));
    hub = await new FakeHub([
        {repo: "someone/Tiny-GGUF", revision, path: "tiny-Q4_K_M.gguf", content: q4.content},
        {repo: "someone/Tiny-GGUF", revision, path: "tiny-Q8_0.gguf", content: q8.content},
        {repo: "someone/Big-GGUF", revision, path: "Q4_K_M/big-Q4_K_M-00001-of-00002.gguf", content: partOne.content},
        {repo: "someone/Big-GGUF", revision, path: "Q4_K_M/big-Q4_K_M-00002-of-00002.gguf", content: partTwo.content},
        {repo: "someone/embed-onnx", revision, path: "config.json", content: config},
        {repo: "someone/embed-onnx", revision, path: "tokenizer.json", content: Buffer.from("{}")},
        {repo: "someone/embed-onnx", revision, path: "onnx/model_quantized.onnx", content: onnx.content},
        {repo: "someone/embed-onnx", revision, path: "onnx/model.onnx", content: Buffer.from("unused")},
        {repo: "someone/embed-onnx", revision, path: "README.md", content: Buffer.from("# readme")}
    ]).start();
    hub.pipelineTags["someone/embed-onnx"] = "feature-extraction";
});
afterEach(async () => {
    await hub.close();
    fs.rmSync(dir, {recursive: true, force: true});
});

const run = async (given: string, options: {allowUnverified?: boolean} = {}) => {
    const entry = await hubRepoEntry(parseHubSpec(given)!, {hfEndpoint: hub.url, hfToken: null});
    const modelsDir = path.join(dir, "models");
    hub.partFileOf = (filePath) => path.join(modelsDir, entry.id, `${filePath}.part`);
    await downloadModels({catalogue: [entry], only: [entry.id], modelsDir, manifestPath: path.join(modelsDir, "models.json"),
        hub: {hfEndpoint: hub.url, hfToken: null}, out: collect(), retryDelayMs: 0, ...options});
    return {entry, modelsDir};
};

describe("download-models -- <hub repository>", () => {
    it("parses the spellings llama-server and Ollama users type", () => {
        expect(parseHubSpec("someone/Tiny-GGUF:Q8_0")).toEqual({repo: "someone/Tiny-GGUF", quant: "Q8_0", file: null});
        expect(parseHubSpec("hf.co/someone/Tiny-GGUF")).toEqual({repo: "someone/Tiny-GGUF", quant: null, file: null});
        expect(parseHubSpec("someone/Tiny-GGUF/dir/x.gguf")).toEqual({repo: "someone/Tiny-GGUF", quant: null, file: "dir/x.gguf"});
        expect(parseHubSpec("not a repo")).toBeNull();
    });

    it("owner/repo:Q8_0 picks that quantisation, pinned to the commit, verified, and adds it to the manifest", async () => {
        const {entry, modelsDir} = await run("someone/Tiny-GGUF:Q8_0");
        expect(entry).toMatchObject({id: "tiny-q8_0", task: "chat", revision, files: [{path: "tiny-Q8_0.gguf", size: 200_000, sha256: q8.sha256}]});
        expect(fs.readFileSync(path.join(modelsDir, "tiny-q8_0", "tiny-Q8_0.gguf"))).toEqual(q8.content);
        const [served] = loadServedManifest(path.join(modelsDir, "models.json"));
        expect(served).toMatchObject({id: "tiny-q8_0", task: "chat"});
    });

    it("owner/repo alone takes Q4_K_M; a split GGUF brings every part; the manifest names the first", async () => {
        expect((await run("someone/Tiny-GGUF")).entry.files.map((file) => file.path)).toEqual(["tiny-Q4_K_M.gguf"]);
        const {entry, modelsDir} = await run("someone/Big-GGUF:Q4_K_M");
        expect(entry.files.map((file) => file.path)).toEqual(["Q4_K_M/big-Q4_K_M-00001-of-00002.gguf", "Q4_K_M/big-Q4_K_M-00002-of-00002.gguf"]);
        expect(entry.manifest.path).toBe("Q4_K_M/big-Q4_K_M-00001-of-00002.gguf");
        expect(fs.readFileSync(path.join(modelsDir, entry.id, "Q4_K_M/big-Q4_K_M-00002-of-00002.gguf"))).toEqual(partTwo.content);
    });

    it("a Whisper export brings its encoder and merged decoder of the dtype (fp32 when that is all there is)", () => {
        const tree = ["config.json", "generation_config.json", "preprocessor_config.json", "tokenizer.json", "tokenizer_config.json", "README.md",
            "onnx/encoder_model.onnx", "onnx/decoder_model_merged.onnx", "onnx/decoder_model.onnx", "onnx/decoder_with_past_model.onnx",
            "onnx/encoder_model_quantized.onnx", "onnx/decoder_model_merged_quantized.onnx"].map((path) => ({type: "file", path}));
        const paths = (spec: Partial<Parameters<typeof selectHubFiles>[0]>, files = tree) =>
            selectHubFiles({repo: "r", quant: null, file: null, ...spec}, files).files.map((file) => file.path);
        expect(paths({})).toEqual(["config.json", "generation_config.json", "preprocessor_config.json", "tokenizer.json", "tokenizer_config.json",
            "onnx/encoder_model_quantized.onnx", "onnx/decoder_model_merged_quantized.onnx"]);
        expect(paths({dtype: "fp32"}).slice(-2)).toEqual(["onnx/encoder_model.onnx", "onnx/decoder_model_merged.onnx"]);
        expect(paths({}, tree.filter((file) => !file.path.includes("quantized"))).slice(-2)).toEqual(["onnx/encoder_model.onnx", "onnx/decoder_model_merged.onnx"]);
        expect(() => paths({dtype: "fp16"})).toThrow(/no fp16 pair/u);
    });

    it("an ONNX repository brings its configuration, tokenizer and quantized model, with the hub's task", async () => {
        expect(selectHubFiles({repo: "r", quant: null, file: null}, [
            {type: "file", path: "config.json"}, {type: "file", path: "onnx/model.onnx"}, {type: "file", path: "onnx/model_quantized.onnx"}, {type: "file", path: "README.md"}
        ]).files.map((file) => file.path)).toEqual(["config.json", "onnx/model_quantized.onnx"]);
        const {entry} = await run("someone/embed-onnx", {allowUnverified: true});
        expect(entry).toMatchObject({task: "embeddings", manifest: {path: "."}});
        expect(entry.files.map((file) => file.path).sort()).toEqual(["config.json", "onnx/model_quantized.onnx", "tokenizer.json"]);
    });

    it("picks the files a task needs: a Stable Diffusion export's networks, Kokoro's voices, the dtype asked for", () => {
        const file = (path: string) => ({type: "file", path});
        const sd = selectHubFiles({repo: "r", quant: null, file: null}, ["model_index.json", "unet/model.onnx", "unet/model.onnx_data", "unet/config.json", "unet/diffusion_pytorch_model.safetensors",
            "text_encoder/model.onnx", "vae_decoder/model.onnx", "vae_encoder/model.onnx", "tokenizer/vocab.json", "tokenizer/merges.txt", "scheduler/scheduler_config.json", "README.md"].map(file));
        expect(sd.files.map((entry) => entry.path)).toEqual(["model_index.json", "unet/model.onnx", "unet/model.onnx_data", "unet/config.json",
            "text_encoder/model.onnx", "vae_decoder/model.onnx", "tokenizer/vocab.json", "tokenizer/merges.txt", "scheduler/scheduler_config.json"]);
        const kokoro = ["config.json", "tokenizer.json", "onnx/model.onnx", "onnx/model_quantized.onnx", "onnx/model_fp16.onnx", "voices/af_heart.bin", "voices/am_echo.bin"].map(file);
        expect(selectHubFiles({repo: "r", quant: null, file: null}, kokoro).files.map((entry) => entry.path))
            .toEqual(["config.json", "tokenizer.json", "voices/af_heart.bin", "voices/am_echo.bin", "onnx/model_quantized.onnx"]);
        expect(selectHubFiles({repo: "r", quant: null, file: null, dtype: "fp16"}, kokoro).files.at(-1)!.path).toBe("onnx/model_fp16.onnx");
        expect(() => selectHubFiles({repo: "r", quant: null, file: null, dtype: "q4"}, kokoro)).toThrow("r has no q4 model");
    });

    it("a download that does not match the hub's sha256 is refused; an interrupted one resumes", async () => {
        hub.switches.corruptTimes["tiny-Q8_0.gguf"] = 2;
        await expect(run("someone/Tiny-GGUF:Q8_0")).rejects.toThrow(/corrupt after two downloads/);
        hub.switches.cutAfter["tiny-Q8_0.gguf"] = 80_000;
        await run("someone/Tiny-GGUF:Q8_0");
        expect(hub.contentRequests("tiny-Q8_0.gguf").some((request) => request.range != null)).toBe(true);
        expect(createHash("sha256").update(fs.readFileSync(path.join(dir, "models/tiny-q8_0/tiny-Q8_0.gguf"))).digest("hex")).toBe(q8.sha256);
    });

    it("names what is missing: a quantisation the repository lacks, a repository that does not exist", async () => {
        await expect(run("someone/Tiny-GGUF:Q2_K")).rejects.toThrow("someone/Tiny-GGUF has no Q2_K GGUF; it has: tiny-Q4_K_M.gguf, tiny-Q8_0.gguf");
        await expect(run("nobody/none")).rejects.toThrow("nobody/none does not exist");
    });

    it("a reranker repository (pipeline_tag text-ranking) is a rerank model; a text classifier's is refused before any download", async () => {
        hub.pipelineTags["someone/embed-onnx"] = "text-ranking";
        const {entry, modelsDir} = await run("someone/embed-onnx", {allowUnverified: true});
        expect(entry).toMatchObject({task: "rerank", manifest: {path: "."}});
        expect(JSON.parse(fs.readFileSync(path.join(modelsDir, "models.json"), "utf8")).models).toEqual([expect.objectContaining({task: "rerank"})]);
        fs.rmSync(modelsDir, {recursive: true});
        hub.pipelineTags["someone/embed-onnx"] = "text-classification";
        await expect(run("someone/embed-onnx", {allowUnverified: true})).rejects.toThrow(
            "someone/embed-onnx is a sequence classifier (a text classifier, whose architecture no reranker has), " +
            "not an embedding model: no capability serves classification models yet (hub pipeline_tag text-classification).");
        expect(fs.existsSync(path.join(dir, "models"))).toBe(false);
    });
});
