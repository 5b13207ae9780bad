import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServedManifest } from "../../src/capabilities/loadServedManifest.js";
import { downloadModels } from "../../src/download/downloadModels.js";
import { hubRepoEntry, parseHubSpec, selectHubFiles } from "../../src/download/hubRepoEntry.js";
import { dataUrl, twoColourImage } from "../support/imageFixtures.js";
import { jsonOf, startTestServer } from "../support/startTestServer.js";
import { tinySmolVlmPath } from "../support/testModels.js";
import { FakeHub, type HubFile } from "./fakeHub.js";
import { collect } from "./fixtures.js";

// `npm run download-models -- onnx-community/SmolVLM-256M-Instruct`: a transformers.js image-text-to-text export, on
// the loopback stand-in hub with the generated SmolVLM-shaped model as its content (plus the other dtypes' files and the
// repository's extras, which must not be fetched). The downloaded folder is then served and answers as the original.
const revision = randomBytes(20).toString("hex");
const repo = "onnx-community/SmolVLM-256M-Instruct";
const bare = "someone/smolvlm-no-tag";

/** The generated model's files, as the hub's repository holds them. */
function modelFiles(repoName: string): HubFile[] {
    const walk = (folder: string): string[] => fs.readdirSync(path.join(tinySmolVlmPath, folder), {withFileTypes: true})
        .flatMap((entry) => entry.isDirectory() ? walk(path.join(folder, entry.name)) : [path.join(folder, entry.name)]);
    return walk("").map((file) => ({repo: repoName, revision, path: file.split(path.sep).join("/"), content: fs.readFileSync(path.join(tinySmolVlmPath, file))}));
}
/** What a real export has beside them: the networks in other dtypes, the unmerged decoders, the README, the Python side's files. */
const extras = ["onnx/vision_encoder_quantized.onnx", "onnx/embed_tokens_fp16.onnx", "onnx/decoder_model_merged_q4.onnx", "onnx/decoder_model_merged_q4.onnx_data",
    "onnx/decoder_model.onnx", "onnx/decoder_with_past_model.onnx", "README.md", "model.safetensors", "added_tokens.json", "chat_template.json"];

let hub: FakeHub;
let dir: string;
beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-download-vlm-"));
    hub = await new FakeHub([
        ...modelFiles(repo), ...extras.map((file) => ({repo, revision, path: file, content: Buffer.from(`not this: ${file}`)})),
        ...modelFiles(bare)
    ]).start();
    hub.pipelineTags[repo] = "image-text-to-text";
});
afterAll(async () => {
    await hub?.close();
    fs.rmSync(dir, {recursive: true, force: true});
});

const ownFiles = ["config.json", "generation_config.json", "preprocessor_config.json", "processor_config.json", "tokenizer.json", "tokenizer_config.json",
    "onnx/vision_encoder.onnx", "onnx/embed_tokens.onnx", "onnx/decoder_model_merged.onnx"];

describe("download-models -- <a vision-language model's repository>", () => {
    it("fetches the fp32 networks the vision engine loads and the processor's files, nothing else; the folder is then served", async () => {
        const entry = await hubRepoEntry(parseHubSpec(repo)!, {hfEndpoint: hub.url, hfToken: null});
        expect(entry).toMatchObject({id: "smolvlm-256m-instruct", task: "chat", revision, manifest: {path: "."}});
        expect(entry.files.map((file) => file.path).sort()).toEqual([...ownFiles, "chat_template.json"].sort());
        expect(entry.files.every((file) => file.sha256 != null)).toBe(true);
        const modelsDir = path.join(dir, "models");
        hub.requests.length = 0;
        await downloadModels({catalogue: [entry], only: [entry.id], modelsDir, manifestPath: path.join(modelsDir, "models.json"),
            hub: {hfEndpoint: hub.url, hfToken: null}, out: collect(), retryDelayMs: 0});
        // Exactly those files crossed the wire.
        const fetched = new Set(hub.requests.filter((request) => request.server === "hub" && request.file != null).map((request) => request.file));
        expect([...fetched].sort()).toEqual([...ownFiles, "chat_template.json"].sort());
        const [served] = loadServedManifest(path.join(modelsDir, "models.json"));
        expect(served).toMatchObject({id: "smolvlm-256m-instruct", task: "chat"});

        // Served from the downloaded folder, it answers what the original folder answers, the image's tokens counted.
        const server = await startTestServer({models: [{id: "downloaded", task: "chat", path: served.path}, {id: "original", task: "chat", path: tinySmolVlmPath}], config: {workers: 1}});
        try {
            const png = await twoColourImage("png", 40, 20);
            const ask = async (model: string) => jsonOf(await server.post("/v1/chat/completions", {model, max_tokens: 8, temperature: 0,
                messages: [{role: "user", content: [{type: "image_url", image_url: {url: dataUrl("image/png", png)}}, {type: "text", text: "What is this?"}]}]}));
            const [downloaded, original] = [await ask("downloaded"), await ask("original")];
            expect(downloaded.choices[0].message.content).toBe(original.choices[0].message.content);
            expect(downloaded.usage).toEqual(original.usage);
        } finally {
            await server.stop();
        }
    });

    it("without a pipeline_tag, its config.json's architecture makes it a chat model", async () => {
        const entry = await hubRepoEntry(parseHubSpec(bare)!, {hfEndpoint: hub.url, hfToken: null});
        expect(entry).toMatchObject({task: "chat", manifest: {path: "."}});
        expect(entry.files.map((file) => file.path).sort()).toEqual([...ownFiles].sort());
    });

    it("brings external data with its network; another dtype than the engine's is refused, as is a repository without the fp32 networks", () => {
        const file = (name: string) => ({type: "file", path: name});
        const tree = [...ownFiles, "onnx/decoder_model_merged.onnx_data", "onnx/decoder_model_merged.onnx_data_1", "onnx/decoder_model_merged_q4.onnx_data", "chat_template.jinja"].map(file);
        const spec = {repo: "r", quant: null, file: null};
        expect(selectHubFiles(spec, tree).files.map((entry) => entry.path).filter((name) => /_data|jinja/.test(name)))
            .toEqual(["chat_template.jinja", "onnx/decoder_model_merged.onnx_data", "onnx/decoder_model_merged.onnx_data_1"]);
        expect(selectHubFiles({...spec, dtype: "fp32"}, tree).files).toHaveLength(tree.length - 1);
        expect(() => selectHubFiles({...spec, dtype: "q8"}, tree)).toThrow("r is a vision-language model; the vision engine loads its fp32 files only: leave out --dtype or give fp32.");
        const quantizedOnly = tree.map((entry) => ({...entry, path: entry.path.replace(/^onnx\/(\w+)\.onnx$/, "onnx/$1_quantized.onnx")}));
        expect(() => selectHubFiles(spec, quantizedOnly)).toThrow(/r lacks the fp32 networks the vision engine loads \(onnx\/vision_encoder\.onnx, .*\); it has: onnx\/vision_encoder_quantized\.onnx/);
    });
});
