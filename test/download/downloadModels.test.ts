import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { downloadModels, type DownloadModelsOptions } from "../../src/download/downloadModels.js";
import { DownloadError } from "../../src/download/DownloadError.js";
import { listCatalogue } from "../../src/download/listCatalogue.js";
import { loadCatalogue } from "../../src/download/loadCatalogue.js";
import { loadServedManifest } from "../../src/capabilities/loadServedManifest.js";
import { ModelRegistry } from "../../src/core/registry/ModelRegistry.js";
import { chatFile, collect, embedConfig, embedModel, extraFile, filesUnder, setUp, tearDown, type Setup } from "./fixtures.js";

let setup: Setup;
beforeEach(async () => setup = await setUp());
afterEach(async () => tearDown(setup));

const run = (options: Partial<DownloadModelsOptions> = {}) => downloadModels({
    catalogue: setup.catalogue, modelsDir: setup.modelsDir, manifestPath: setup.manifestPath,
    hub: {hfEndpoint: setup.hub.url, hfToken: null}, out: setup.output, retryDelayMs: 0, ...options
});

describe("downloadModels", () => {
    it("the fixture catalogue passes the catalogue validation", () => {
        expect(loadCatalogue(setup.cataloguePath)).toEqual(setup.catalogue);
    });

    it("downloads the default set, verifies it, and writes a manifest the server loads", async () => {
        const summary = await run();
        expect(summary).toMatchObject({models: ["tiny-chat", "tiny-embed"], downloadedFiles: 3, presentFiles: 0});
        expect(filesUnder(setup.modelsDir)).toEqual([
            "models.json",
            "tiny-chat/tiny-chat.q4.gguf", "tiny-chat/tiny-chat.q4.gguf.sha256",
            "tiny-embed/config.json", "tiny-embed/config.json.sha256",
            "tiny-embed/onnx/model_quantized.onnx", "tiny-embed/onnx/model_quantized.onnx.sha256"
        ]);
        expect(fs.readFileSync(path.join(setup.modelsDir, "tiny-chat/tiny-chat.q4.gguf"))).toEqual(chatFile.content);
        expect(fs.readFileSync(path.join(setup.modelsDir, "tiny-embed/onnx/model_quantized.onnx"))).toEqual(embedModel.content);
        expect(fs.readFileSync(path.join(setup.modelsDir, "tiny-embed/config.json.sha256"), "utf8")).toBe(`${embedConfig.sha256}  config.json\n`);

        const entries = loadServedManifest(setup.manifestPath);
        expect(entries.map((entry) => [entry.id, entry.task, entry.path])).toEqual([
            ["tiny-chat", "chat", path.join(setup.modelsDir, "tiny-chat/tiny-chat.q4.gguf")],
            ["tiny-embed", "embeddings", path.join(setup.modelsDir, "tiny-embed")]
        ]);
        expect(entries[0]).toMatchObject({family: "tiny", released: "2024-01-01", aliases: ["gpt-3.5-turbo", "gpt-4o-mini"], contextSize: 512, threads: 2});
        expect(new ModelRegistry(entries).resolve("tiny-latest")?.id).toBe("tiny-chat");

        const text = setup.output.text();
        // The licence of every model is shown before any download starts.
        for (const line of ["tiny-chat (chat): licence apache-2.0, from test-org/tiny-chat-GGUF at ", "tiny-embed (embeddings): licence apache-2.0, from test-org/tiny-embed at "]) {
            expect(text).toContain(line);
            expect(text.indexOf(line)).toBeLessThan(text.indexOf("Downloading 3 files"));
        }
        expect(text).toContain("Downloading 3 files");
        expect(text).toMatch(/tiny-chat\/tiny-chat\.q4\.gguf: done, 300 kB in .*sha256 verified \(catalogue\)/);
        expect(text).toMatch(/tiny-embed\/config\.json: done, .*sha256 verified \(hub\)/);
        expect(text).toContain(`${setup.manifestPath}: added tiny-chat`);
        // Hashes the catalogue lacks are printed, ready to be pinned.
        expect(text).toContain(`tiny-embed config.json: "size": 200, "sha256": "${embedConfig.sha256}"`);
    });

    it("follows the hub's redirect to its CDN, sending the token to the hub only", async () => {
        await run({hub: {hfEndpoint: setup.hub.url, hfToken: "hf_secret"}});
        const hubSide = setup.hub.requests.filter((request) => request.server === "hub");
        const cdnSide = setup.hub.requests.filter((request) => request.server === "cdn");
        expect(hubSide.map((request) => request.status)).toEqual([302, 302, 302]);
        expect(hubSide.every((request) => request.authorization === "Bearer hf_secret")).toBe(true);
        expect(cdnSide).toHaveLength(3);
        expect(cdnSide.every((request) => request.authorization == null)).toBe(true);
    });

    it("a second run downloads nothing and says so, without re-hashing or any request", async () => {
        await run();
        const manifestBefore = fs.statSync(setup.manifestPath).mtimeMs;
        setup.hub.requests.length = 0;
        const output = collect();
        const summary = await run({out: output});
        expect(summary).toMatchObject({downloadedFiles: 0, presentFiles: 3});
        expect(setup.hub.requests).toEqual([]);
        expect(output.text()).toBe("All 3 files already present; nothing to download.\n");
        expect(fs.statSync(setup.manifestPath).mtimeMs).toBe(manifestBefore);
    });

    it("a file changed since its download is noticed (re-hashed) and fetched again", async () => {
        await run();
        const file = path.join(setup.modelsDir, "tiny-chat/tiny-chat.q4.gguf");
        const bytes = fs.readFileSync(file);
        bytes[10] ^= 1;
        fs.writeFileSync(file, bytes);
        setup.hub.requests.length = 0;
        await run();
        expect(setup.hub.contentRequests().map((request) => request.path)).toEqual([`/cdn/0`]);
        expect(fs.readFileSync(file)).toEqual(chatFile.content);
    });

    it("a file only touched since its download is re-hashed, not fetched again", async () => {
        await run();
        const file = path.join(setup.modelsDir, "tiny-chat/tiny-chat.q4.gguf");
        const later = new Date(Date.now() + 60_000);
        fs.utimesSync(file, later, later);
        setup.hub.requests.length = 0;
        await run();
        expect(setup.hub.requests).toEqual([]);
    });

    it("--only picks a task's default model, a model by id or by alias", async () => {
        expect((await run({only: ["embeddings"], dryRun: true})).models).toEqual(["tiny-embed"]);
        expect((await run({only: ["chat"], dryRun: true})).models).toEqual(["tiny-chat"]);
        expect((await run({only: ["tiny-extra", "gpt-4o-mini"], dryRun: true})).models).toEqual(["tiny-chat", "tiny-extra"]);

        await run({only: ["tiny-extra"]});
        expect(filesUnder(path.join(setup.modelsDir, "tiny-extra"))).toEqual(["sub dir/extra model.gguf", "sub dir/extra model.gguf.sha256"]);
        expect(fs.readFileSync(path.join(setup.modelsDir, "tiny-extra/sub dir/extra model.gguf"))).toEqual(extraFile.content);
        expect(loadServedManifest(setup.manifestPath).map((entry) => entry.id)).toEqual(["tiny-extra"]);
        // The path with a space went over the wire percent-encoded.
        expect(setup.hub.requests[0]).toMatchObject({server: "hub", path: `/test-org/extra/resolve/${setup.catalogue[2].revision}/sub dir/extra model.gguf`});
    });

    it("--models-dir apart from the manifest's folder: paths are written relative to the manifest", async () => {
        const store = path.join(setup.dir, "store");
        await run({modelsDir: store, only: ["tiny-chat"]});
        expect(JSON.parse(fs.readFileSync(setup.manifestPath, "utf8")).models[0].path).toBe("../store/tiny-chat/tiny-chat.q4.gguf");
        expect(loadServedManifest(setup.manifestPath)[0].path).toBe(path.join(store, "tiny-chat/tiny-chat.q4.gguf"));
    });

    it("a refused connection: one error naming the host, no retries, no .part mentioned, no empty folders left", async () => {
        await setup.hub.close();
        const output = collect();
        const error = await run({out: output}).catch((caught) => caught);
        setup.hub = await setup.hub.start();
        expect(error).toBeInstanceOf(DownloadError);
        expect(error.message).toMatch(/^Cannot reach 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
        expect(error.message).not.toContain(".part");
        expect(output.text()).not.toContain("Retrying");
        expect(output.text()).not.toContain("error");
        expect(fs.existsSync(setup.modelsDir) ? filesUnder(setup.modelsDir) : []).toEqual([]);
        expect(fs.existsSync(setup.modelsDir) ? fs.readdirSync(setup.modelsDir) : []).toEqual([]);
    });

    it("a model that fails (404) leaves no empty folder, and its error is said once, by the thrown error", async () => {
        setup.hub.switches.fail["tiny-chat.q4.gguf"] = {status: 404, code: "EntryNotFound"};
        const output = collect();
        const error = await run({out: output}).catch((caught) => caught);
        expect(error).toBeInstanceOf(DownloadError);
        expect(error.message).toContain("tiny-chat.q4.gguf");
        expect(output.text()).not.toContain(error.message.split(" (")[0]);
        expect(output.text()).not.toMatch(/^error:/m);
        expect(fs.existsSync(path.join(setup.modelsDir, "tiny-chat"))).toBe(false);
        expect(fs.existsSync(path.join(setup.modelsDir, "tiny-embed/onnx/model_quantized.onnx"))).toBe(true);
    });

    it("a connection cut before any byte, every time: bounded retries, then no phantom .part in the message", async () => {
        setup.hub.switches.cutAfter["tiny-chat.q4.gguf"] = 0;
        setup.hub.switches.cutTimes["tiny-chat.q4.gguf"] = 100;
        const output = collect();
        const error = await run({out: output, only: ["tiny-chat"]}).catch((caught) => caught);
        expect(error).toBeInstanceOf(DownloadError);
        expect(output.text().match(/Retrying/g)).toHaveLength(5);
        expect(error.message).toContain("Nothing was written");
        expect(error.message).not.toContain(".part");
    });

    it("--only with an unknown name is a usage error listing what exists", async () => {
        const error = await run({only: ["video"]}).catch((error) => error);
        expect(error).toBeInstanceOf(DownloadError);
        expect(error.kind).toBe("usage");
        expect(error.message).toContain("Tasks: chat, embeddings. Models: tiny-chat, tiny-embed, tiny-extra");
    });

    it("--dry-run lists what would be fetched with sizes, makes no request and writes nothing", async () => {
        await run({only: ["tiny-extra"]});
        setup.hub.requests.length = 0;
        const output = collect();
        await run({dryRun: true, only: ["chat", "embeddings", "tiny-extra"], out: output});
        expect(setup.hub.requests).toEqual([]);
        expect(filesUnder(setup.modelsDir)).toEqual(["models.json", "tiny-extra/sub dir/extra model.gguf", "tiny-extra/sub dir/extra model.gguf.sha256"]);
        expect(output.text()).toContain("  would fetch  tiny-chat.q4.gguf (300 kB)");
        expect(output.text()).toContain("  would fetch  config.json (size unknown)");
        expect(output.text()).toContain("  present      sub dir/extra model.gguf (100 kB)");
        expect(output.text()).toContain("Dry run: would download 3 files, 550 kB + 1 file of unknown size; 1 already present. Nothing was written.");
    });

    it("--list shows every model with its status", async () => {
        await run({only: ["tiny-chat"]});
        fs.mkdirSync(path.join(setup.modelsDir, "tiny-embed/onnx"), {recursive: true});
        fs.writeFileSync(path.join(setup.modelsDir, "tiny-embed/onnx/model_quantized.onnx.part"), "partial");
        const text = await listCatalogue(setup.catalogue, setup.modelsDir);
        expect(text).toMatch(/^model\s+task\s+default\s+size\s+licence\s+status\s+names$/m);
        expect(text).toMatch(/^tiny-chat\s+chat\s+yes\s+300 kB\s+apache-2.0\s+installed\s+gpt-3.5-turbo, gpt-4o-mini, tiny-latest$/m);
        expect(text).toMatch(/^tiny-embed\s+embeddings\s+yes\s+250 kB \+ 1 file of unknown size\s+apache-2.0\s+incomplete \(0 of 2 files, resumable\)\s+text-embedding-ada-002, tiny-embed-latest$/m);
        expect(text).toMatch(/^tiny-extra\s+chat\s+100 kB\s+apache-2.0\s+missing$/m);
        expect(setup.hub.requests.length).toBe(1 + 1);
    });

    it("keeps the user's own entries in an existing manifest, and their aliases", async () => {
        fs.mkdirSync(setup.modelsDir, {recursive: true});
        fs.writeFileSync(path.join(setup.modelsDir, "mine.gguf"), "x");
        const mine = {id: "my-model", task: "chat", path: "mine.gguf", aliases: ["gpt-4o-mini"], contextSize: 256};
        fs.writeFileSync(setup.manifestPath, JSON.stringify({models: [mine, {id: "tiny-chat", task: "chat", path: "mine.gguf"}]}));
        await run();
        const written = JSON.parse(fs.readFileSync(setup.manifestPath, "utf8")).models;
        expect(written[0]).toEqual(mine);
        expect(written.map((model: {id: string}) => model.id)).toEqual(["my-model", "tiny-chat", "tiny-embed"]);
        expect(written[1]).toMatchObject({path: "tiny-chat/tiny-chat.q4.gguf", aliases: ["gpt-3.5-turbo"]});
        expect(setup.output.text()).toContain("warning: 'gpt-4o-mini' is already used by another model");
        expect(setup.output.text()).toContain("added tiny-embed");
        expect(setup.output.text()).toContain("updated tiny-chat");
        expect(loadServedManifest(setup.manifestPath)).toHaveLength(3);
    });

    it("does not overwrite a manifest that is not JSON, and says how to go on", async () => {
        fs.mkdirSync(setup.modelsDir, {recursive: true});
        fs.writeFileSync(setup.manifestPath, "{ not json");
        const error = await run({only: ["tiny-chat"]}).catch((error) => error);
        expect(error.message).toMatch(/Cannot update .*models\.json: .*Fix or move the file away and run again \(downloaded files are kept\)/);
        expect(fs.readFileSync(setup.manifestPath, "utf8")).toBe("{ not json");
        expect(fs.existsSync(path.join(setup.modelsDir, "tiny-chat/tiny-chat.q4.gguf"))).toBe(true);
    });

    it("a gated model fails with what to do while the other models still download", async () => {
        setup.hub.switches.gated["test-org/tiny-chat-GGUF"] = "hf_right";
        const error = await run().catch((error) => error);
        expect(error).toBeInstanceOf(DownloadError);
        expect(error.message).toMatch(/test-org\/tiny-chat-GGUF \(file tiny-chat\.q4\.gguf at revision [0-9a-f]{40}\) is gated or private \(401 GatedRepo: Access to this model is restricted\.\)\. Accept its licence at http:\/\/127\.0\.0\.1:\d+\/test-org\/tiny-chat-GGUF while logged in, then set HF_TOKEN/);
        expect(loadServedManifest(setup.manifestPath).map((entry) => entry.id)).toEqual(["tiny-embed"]);
        expect(filesUnder(path.join(setup.modelsDir, "tiny-chat"))).toEqual([]);
    });

    it("an unreachable hub stops the run at once with what to check", async () => {
        await setup.hub.close();
        const error = await run().catch((error) => error);
        expect(error.kind).toBe("network");
        expect(error.message).toMatch(/^Cannot reach 127\.0\.0\.1:\d+ \(ECONNREFUSED\): check the network, or set HF_ENDPOINT to a reachable mirror\.$/);
        expect(filesUnder(setup.modelsDir)).toEqual([]);
        setup.hub = await setup.hub.start();  // tearDown closes it again
    });

    it("refuses to start when the disk cannot hold the files", async () => {
        const error = await run({freeBytes: () => 1000}).catch((error) => error);
        expect(error.kind).toBe("disk");
        expect(error.message).toMatch(/^Not enough disk space in .*models: 550 kB needed, 1.00 kB free\. Free some space or pass --models-dir on a bigger disk\.$/);
        expect(setup.hub.requests).toEqual([]);
    });

    it("refuses a catalogue entry whose revision is still a placeholder", async () => {
        setup.catalogue[0].revision = "0".repeat(40);
        const error = await run().catch((error) => error);
        expect(error.message).toContain("The catalogue has no pinned revision yet for tiny-chat");
        expect(setup.hub.requests).toEqual([]);
    });
});
