import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manifestFromPaths } from "../../src/capabilities/manifestFromPaths.js";
import { loadConfig } from "../../src/config.js";
import { spawnServer } from "../support/spawnServer.js";
import { jsonOf, startTestServer } from "../support/startTestServer.js";
import { storiesModelPath, tinyBertPath, tinyChatModelPath, tinyKokoroPath, tinySdPath, tinyVitsPath, tinyWhisperPath } from "../support/testModels.js";
import { GgufWriter } from "../support/gguf/GgufWriter.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";

// `npm start -- <model files and folders>`: served without a manifest, the task read from the files.
let dir: string;
let embeddingGguf: string;
beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-test-paths-"));
    embeddingGguf = path.join(dir, "tiny-embed.gguf");
    await makeTestLlamaGguf(embeddingGguf, {seed: 3, poolingType: 1});
});
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

describe("model paths become manifest entries", () => {
    it("reads each file's or folder's task: GGUF architecture and pooling, ONNX config.json / model_index.json", async () => {
        const {models} = manifestFromPaths([tinyChatModelPath, embeddingGguf, tinyBertPath, tinyKokoroPath, tinyVitsPath, tinySdPath, tinyWhisperPath]);
        expect(models.map(({id, task}) => [id, task])).toEqual([
            ["tiny-chatml", "chat"], ["tiny-embed", "embeddings"], ["tiny-bert", "embeddings"], ["tiny-kokoro", "speech"], ["tiny-vits", "speech"], ["tiny-sd", "image"],
            ["tiny-whisper", "transcription"]
        ]);
    });

    it("a folder of models serves each of them", async () => {
        const folder = path.join(dir, "several");
        fs.mkdirSync(folder);
        fs.copyFileSync(storiesModelPath, path.join(folder, "stories.gguf"));
        fs.cpSync(tinyBertPath, path.join(folder, "bert"), {recursive: true});
        expect(manifestFromPaths([folder]).models.map(({id, task}) => [id, task])).toEqual([["bert", "embeddings"], ["stories", "chat"]]);
    });

    it("names are unique: a suffix skips every name taken, a file's own or one given before, whatever the order found", async () => {
        const folder = path.join(dir, "same-names");
        fs.mkdirSync(path.join(folder, "sub"), {recursive: true});
        const top = path.join(folder, "tiny-chatml.gguf");
        const below = path.join(folder, "sub", "tiny-chatml.gguf");
        const own = path.join(folder, "tiny-chatml-2.gguf");
        for (const file of [top, below, own])
            fs.copyFileSync(storiesModelPath, file);
        const idsOf = (given: string[]) => Object.fromEntries(manifestFromPaths(given).models.map((model) => [path.relative(folder, model.path), model.id]));
        // Depth first, by name: sub/ is found first, then tiny-chatml-2.gguf, which keeps its own name, so the second tiny-chatml is -3.
        const {models, renamed} = manifestFromPaths([folder]);
        expect(models.map((model) => [path.relative(folder, model.path), model.id])).toEqual([
            ["sub/tiny-chatml.gguf", "tiny-chatml"], ["tiny-chatml-2.gguf", "tiny-chatml-2"], ["tiny-chatml.gguf", "tiny-chatml-3"]
        ]);
        expect(renamed).toEqual([{id: "tiny-chatml-3", name: "tiny-chatml", path: top, holder: below}]);
        // The same names whatever the order the files are given in: only which of two equal names is first changes.
        expect(idsOf([own, top, below])).toEqual({"tiny-chatml-2.gguf": "tiny-chatml-2", "tiny-chatml.gguf": "tiny-chatml", "sub/tiny-chatml.gguf": "tiny-chatml-3"});
        expect(idsOf([top, below, own])).toEqual({"tiny-chatml-2.gguf": "tiny-chatml-2", "tiny-chatml.gguf": "tiny-chatml", "sub/tiny-chatml.gguf": "tiny-chatml-3"});
        // Generated names skip each other too; a name longer than an id may be is cut, its suffix kept.
        const more = path.join(dir, "more-names");
        const long = "l".repeat(230);
        for (const name of ["a/x.gguf", "b/x.gguf", "c/x.gguf", "d/x-3.gguf", `e/${long}.gguf`, `f/${long}.gguf`]) {
            fs.mkdirSync(path.join(more, path.dirname(name)), {recursive: true});
            fs.copyFileSync(storiesModelPath, path.join(more, name));
        }
        expect(manifestFromPaths([more]).models.map((model) => model.id)).toEqual(["x", "x-2", "x-4", "x-3", "l".repeat(200), `${"l".repeat(198)}-2`]);

        // The server starts, serves all three, and says which file got which name.
        const logLines: string[] = [];
        const server = await startTestServer({models: [], config: {modelPaths: [folder], preloadAll: false, logLevel: "info"}, logLines});
        try {
            const listed = await jsonOf(await fetch(`${server.url}/v1/models`)) as {data: {id: string}[]};
            expect(listed.data.map((model) => model.id)).toEqual(["tiny-chatml", "tiny-chatml-2", "tiny-chatml-3"]);
            expect(logLines.filter((line) => line.includes("Serving "))).toEqual([expect.stringContaining(`Serving ${top} as 'tiny-chatml-3' ('tiny-chatml' is ${below})`)]);
        } finally {
            await server.stop();
        }
    });

    it("a file reached twice (a folder and a file in it, two spellings, a link) is registered once, by its real path", async () => {
        const library = path.join(dir, "twice");
        fs.mkdirSync(library);
        const file = path.join(library, "stories260K.gguf");
        fs.copyFileSync(storiesModelPath, file);
        const links = path.join(dir, "twice-links");
        fs.mkdirSync(links);
        fs.symlinkSync(file, path.join(links, "linked.gguf"));
        fs.symlinkSync(library, path.join(links, "library"));
        const spellings = [library, file, `${library}/./stories260K.gguf`, `${library}//stories260K.gguf`, path.relative(process.cwd(), file),
            path.join(links, "library", "stories260K.gguf"), path.join(links, "library")];
        expect(manifestFromPaths(spellings)).toMatchObject({models: [{id: "stories260K", path: file}], renamed: []});
        expect(manifestFromPaths([file, library]).models.map((model) => model.id)).toEqual(["stories260K"]);
        // A link found first is the one served (by its name); the file it leads to is not served again.
        expect(manifestFromPaths([links, library]).models.map((model) => [model.id, model.path])).toEqual([["stories260K", path.join(links, "library", "stories260K.gguf")]]);
        expect(manifestFromPaths([path.join(links, "linked.gguf"), file]).models.map((model) => model.id)).toEqual(["linked"]);
    });

    it("a folder is scanned down to maxScanDepth folders below it: what is found there is served, what is not a model is skipped with why", async () => {
        const library = path.join(dir, "library");
        const at = (...parts: string[]) => {
            fs.mkdirSync(path.join(library, ...parts.slice(0, -1)), {recursive: true});
            return path.join(library, ...parts);
        };
        // LM Studio's publisher/repo/file.gguf, a hub cache's snapshot folder, an ONNX model folder two levels down.
        fs.copyFileSync(storiesModelPath, at("publisher", "repo", "coder.gguf"));
        fs.copyFileSync(embeddingGguf, at("models--org--embed", "snapshots", "e3b0c442", "embed.gguf"));
        fs.cpSync(tinyBertPath, at("onnx", "bert", "x"), {recursive: true});
        fs.rmSync(path.join(library, "onnx", "bert", "x"), {recursive: true});
        fs.cpSync(tinyBertPath, path.join(library, "onnx", "bert"), {recursive: true});
        // A GGUF reranker (rank pooling) is served as rerank. Not served: too deep, hidden, a link back up (read once), a broken GGUF, a projector.
        fs.copyFileSync(storiesModelPath, at("a", "b", "c", "d", "too-deep.gguf"));
        fs.copyFileSync(storiesModelPath, at(".cache", "hidden.gguf"));
        fs.symlinkSync(library, path.join(library, "publisher", "loop"));
        fs.writeFileSync(at("broken.gguf"), "not a gguf at all");
        await new GgufWriter().addString("general.architecture", "clip").addUint32("general.file_type", 0).write(at("mmproj-vision.gguf"));
        await makeTestLlamaGguf(at("reranker.gguf"), {seed: 4, poolingType: 4});

        const {models, skipped} = manifestFromPaths([library]);
        expect(models.map(({id, task}) => [id, task]).sort()).toEqual([["bert", "embeddings"], ["coder", "chat"], ["embed", "embeddings"], ["reranker", "rerank"]]);
        expect(skipped.map((entry) => [path.relative(library, entry.path), entry.reason.split(":")[0]])).toEqual([
            ["broken.gguf", "is not a readable GGUF file"],
            ["mmproj-vision.gguf", "is a multimodal projector (an mmproj file"]
        ]);
        // A file given by name is still an error.
        expect(() => manifestFromPaths([path.join(library, "mmproj-vision.gguf")])).toThrow("is a multimodal projector");
    });

    it("a folder of 20 models: each registered, none loaded until asked for", async () => {
        const folder = path.join(dir, "twenty");
        fs.mkdirSync(folder);
        for (let index = 1; index <= 20; index++)
            await makeTestLlamaGguf(path.join(folder, `model-${String(index).padStart(2, "0")}.gguf`), {seed: index});
        const server = await startTestServer({models: [], config: {modelPaths: [folder], preloadAll: false}});
        try {
            const listed = await jsonOf(await fetch(`${server.url}/v1/models`)) as {data: {id: string, status: {value: string}}[]};
            expect(listed.data.map((model) => [model.id, model.status.value])).toEqual(
                Array.from({length: 20}, (_, index) => [`model-${String(index + 1).padStart(2, "0")}`, "unloaded"]));
            expect(await (await fetch(`${server.url}/metrics`)).text()).toMatch(/^los_memory_in_use_bytes 0$/m);
            // The first request loads the one it names, and only that one.
            expect((await server.post("/v1/chat/completions", {model: "model-07", messages: [{role: "user", content: "hi"}], max_tokens: 1})).status).toBe(200);
            const after = await jsonOf(await fetch(`${server.url}/v1/models`)) as typeof listed;
            expect(after.data.filter((model) => model.status.value !== "unloaded").map((model) => [model.id, model.status.value])).toEqual([["model-07", "loaded"]]);
        } finally {
            await server.stop();
        }
    });

    it("names the file and what was expected when a path is not a model", async () => {
        const text = path.join(dir, "notes.txt");
        fs.writeFileSync(text, "hello");
        expect(() => manifestFromPaths([text])).toThrow(`${text} is not a model: expected a .gguf file, an ONNX model folder`);
        expect(() => manifestFromPaths([path.join(dir, "missing.gguf")])).toThrow("does not exist: expected a .gguf file");
        const broken = path.join(dir, "broken.gguf");
        fs.writeFileSync(broken, "not a gguf at all");
        expect(() => manifestFromPaths([broken])).toThrow(`${broken} is not a readable GGUF file`);
        const empty = path.join(dir, "empty");
        fs.mkdirSync(empty);
        expect(() => manifestFromPaths([empty])).toThrow(`${empty} holds no model`);
    });

    it("a cross-encoder folder (bert / xlm-roberta with a sequence-classification head) is a rerank model, not embeddings; a text classifier is refused", async () => {
        for (const [name, architecture, modelType] of [["bge-reranker", "XLMRobertaForSequenceClassification", "xlm-roberta"], ["ms-marco", "BertForSequenceClassification", "bert"]]) {
            const folder = path.join(dir, name);
            fs.mkdirSync(folder);
            fs.writeFileSync(path.join(folder, "config.json"), JSON.stringify({model_type: modelType, architectures: [architecture], num_labels: 1}));
            expect(manifestFromPaths([folder]).models.map(({id, task}) => [id, task])).toEqual([[name, "rerank"]]);
        }
        const classifier = path.join(dir, "sentiment");
        fs.mkdirSync(classifier);
        fs.writeFileSync(path.join(classifier, "config.json"), JSON.stringify({model_type: "deberta-v2", architectures: ["DebertaV2ForSequenceClassification"], num_labels: 3}));
        expect(() => manifestFromPaths([classifier])).toThrow(`${classifier} is a sequence classifier (a text classifier, whose architecture no reranker has), ` +
            "not an embedding model: no capability serves classification models yet (config.json architectures DebertaV2ForSequenceClassification).");
        // A GGUF reranker (llama.cpp's rank pooling) likewise.
        const reranker = path.join(dir, "tiny-rerank.gguf");
        await makeTestLlamaGguf(reranker, {seed: 4, poolingType: 4});
        expect(manifestFromPaths([reranker]).models.map(({task}) => task)).toEqual(["rerank"]);
    });

    it("--models takes a manifest, a folder with a models.json, or model paths", () => {
        expect(loadConfig(["--models", tinyChatModelPath], {})).toMatchObject({modelPaths: [tinyChatModelPath]});
        expect(loadConfig([tinyChatModelPath, tinyBertPath], {})).toMatchObject({modelPaths: [tinyChatModelPath, tinyBertPath]});
        expect(loadConfig(["--models", "/etc/models.json"], {})).toMatchObject({modelsConfig: "/etc/models.json", modelPaths: []});
    });
});

describe("npm start -- my-models.json (spawned)", () => {
    it("serves the manifest, as --models my-models.json does (it was refused: 'is not a model')", async () => {
        const manifest = path.join(dir, "my-models.json");
        fs.writeFileSync(manifest, JSON.stringify({models: [{id: "from-manifest", task: "chat", path: tinyChatModelPath, contextSize: 256, aliases: ["gpt-4o-mini"]}]}));
        const server = await spawnServer([manifest]);
        try {
            const models = await (await fetch(`${server.url}/v1/models`)).json() as {data: {id: string, aliases: string[]}[]};
            expect(models.data.map(({id, aliases}) => ({id, aliases}))).toEqual([{id: "from-manifest", aliases: ["gpt-4o-mini"]}]);
        } finally {
            await server.stop();
        }
    });
});

describe("npm start -- some.gguf other-embedding.gguf (spawned)", () => {
    it("serves both with the right tasks", async () => {
        const server = await spawnServer([tinyChatModelPath, embeddingGguf]);
        try {
            const models = await (await fetch(`${server.url}/v1/models`)).json() as {data: {id: string}[]};
            expect(models.data.map((model) => model.id).sort()).toEqual(["tiny-chatml", "tiny-embed"]);
            const chat = await fetch(`${server.url}/v1/chat/completions`, {method: "POST", headers: {"Content-Type": "application/json"},
                body: JSON.stringify({model: "tiny-chatml", messages: [{role: "user", content: "hi"}], max_tokens: 2})});
            expect(chat.status).toBe(200);
            const embedding = await fetch(`${server.url}/v1/embeddings`, {method: "POST", headers: {"Content-Type": "application/json"},
                body: JSON.stringify({model: "tiny-embed", input: "hello"})});
            expect(embedding.status).toBe(200);
        } finally {
            await server.stop();
        }
    });
});
