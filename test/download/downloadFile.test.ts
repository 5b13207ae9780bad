import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { downloadModels, type DownloadModelsOptions } from "../../src/download/downloadModels.js";
import { DownloadError } from "../../src/download/DownloadError.js";
import { chatFile, collect, embedModel, filesUnder, setUp, tearDown, type Setup } from "./fixtures.js";

let setup: Setup;
beforeEach(async () => setup = await setUp());
afterEach(async () => tearDown(setup));

const chatPath = "tiny-chat.q4.gguf";
const target = () => path.join(setup.modelsDir, "tiny-chat", chatPath);
const run = (options: Partial<DownloadModelsOptions> = {}) => downloadModels({
    catalogue: setup.catalogue, modelsDir: setup.modelsDir, manifestPath: setup.manifestPath, only: ["tiny-chat"],
    hub: {hfEndpoint: setup.hub.url, hfToken: null}, out: setup.output, retryDelayMs: 0, ...options
});
const failure = (options: Partial<DownloadModelsOptions> = {}) => run(options).then(() => {
    throw new Error("the download succeeded");
}, (error: unknown) => {
    expect(error).toBeInstanceOf(DownloadError);
    return error as DownloadError;
});
const writePart = (bytes: Buffer) => {
    fs.mkdirSync(path.dirname(target()), {recursive: true});
    fs.writeFileSync(`${target()}.part`, bytes);
};

describe("resuming", () => {
    it("a connection cut mid-file resumes with Range, fetching less than twice the file", async () => {
        setup.hub.switches.cutAfter[chatPath] = 120_000;
        await run();
        const content = setup.hub.contentRequests(chatPath);
        expect(content.map((request) => [request.status, request.range])).toEqual([[200, null], [206, expect.stringMatching(/^bytes=\d+-$/)]]);
        const resumedAt = Number(/\d+/.exec(content[1].range!)![0]);
        expect(resumedAt).toBeGreaterThan(0);
        expect(resumedAt).toBeLessThanOrEqual(120_000);
        const sent = content.reduce((sum, request) => sum + request.bytesSent, 0);
        expect(sent).toBeLessThan(2 * chatFile.content.length);
        expect(fs.readFileSync(target())).toEqual(chatFile.content);
        expect(filesUnder(path.join(setup.modelsDir, "tiny-chat"))).toEqual([chatPath, `${chatPath}.sha256`]);
        expect(setup.output.text()).toMatch(/tiny-chat\.q4\.gguf: Connection to 127\.0\.0\.1:\d+ lost \(UND_ERR_SOCKET\)\. Retrying \(1 of 5\)\.\n/);
        expect(setup.output.text()).toMatch(/resuming at .* of 300 kB/);
    });

    it("a .part left by an interrupted run is resumed by the next run", async () => {
        writePart(chatFile.content.subarray(0, 100_000));
        await run();
        expect(setup.hub.contentRequests(chatPath).map((request) => [request.range, request.bytesSent])).toEqual([["bytes=100000-", 200_000]]);
        expect(fs.readFileSync(target())).toEqual(chatFile.content);
    });

    it("after repeated cuts the .part is kept, no file is installed, and the next run finishes it", async () => {
        setup.hub.switches.cutAfter[chatPath] = 20_000;
        setup.hub.switches.cutTimes[chatPath] = 6;
        const error = await failure();
        expect(error.kind).toBe("network");
        expect(error.message).toMatch(/^Connection to 127\.0\.0\.1:\d+ lost \(UND_ERR_SOCKET\)\. The partial file .*tiny-chat\.q4\.gguf\.part is kept: run again to resume\.$/);
        expect(filesUnder(path.join(setup.modelsDir, "tiny-chat"))).toEqual([`${chatPath}.part`]);
        expect(fs.existsSync(setup.manifestPath)).toBe(false);
        const kept = fs.statSync(`${target()}.part`).size;
        expect(kept).toBe(6 * 20_000);

        setup.hub.requests.length = 0;
        await run();
        expect(setup.hub.contentRequests(chatPath).map((request) => request.range)).toEqual([`bytes=${kept}-`]);
        expect(fs.readFileSync(target())).toEqual(chatFile.content);
    });

    it("a connection that hangs without closing is given up after the stall timeout and resumed", async () => {
        setup.hub.switches.hangAfter[chatPath] = 50_000;
        await run({stallTimeoutMs: 300});
        expect(setup.hub.contentRequests(chatPath).map((request) => request.range)).toEqual([null, expect.stringMatching(/^bytes=\d+-$/)]);
        expect(fs.readFileSync(target())).toEqual(chatFile.content);
        expect(setup.output.text()).toContain("lost (no data arrived for too long). Retrying (1 of 5).");
    });

    it("a server that ignores Range (200) restarts the file cleanly", async () => {
        setup.hub.switches.range = false;
        writePart(chatFile.content.subarray(0, 100_000));
        await run();
        expect(setup.hub.contentRequests(chatPath).map((request) => [request.status, request.range])).toEqual([[200, "bytes=100000-"]]);
        expect(fs.readFileSync(target())).toEqual(chatFile.content);
        expect(setup.output.text()).toContain("the server does not support resuming; downloading from the start");
    });

    it("a complete .part (416 on resume) is verified and installed without fetching it again", async () => {
        writePart(chatFile.content);
        await run();
        expect(setup.hub.contentRequests()).toEqual([]);
        expect(setup.hub.requests.filter((request) => request.server === "cdn").map((request) => request.status)).toEqual([416]);
        expect(fs.readFileSync(target())).toEqual(chatFile.content);
    });

    it("a .part with garbage is deleted after the hash check fails and fetched from scratch", async () => {
        writePart(Buffer.alloc(50_000, 7));
        await run();
        expect(setup.hub.contentRequests(chatPath).map((request) => request.range)).toEqual(["bytes=50000-", null]);
        expect(fs.readFileSync(target())).toEqual(chatFile.content);
        expect(setup.output.text()).toMatch(/corrupt download \(sha256 [0-9a-f]{64}, expected [0-9a-f]{64} \(from the catalogue\)\); deleted, downloading again\./);
    });
});

describe("verification", () => {
    it("a corrupt download is deleted and fetched once more", async () => {
        setup.hub.switches.corruptTimes[chatPath] = 1;
        await run();
        expect(setup.hub.contentRequests(chatPath)).toHaveLength(2);
        expect(fs.readFileSync(target())).toEqual(chatFile.content);
    });

    it("a file corrupt every time fails, leaving neither a final file nor a .part", async () => {
        setup.hub.switches.corruptTimes[chatPath] = 99;
        const error = await failure();
        expect(error.kind).toBe("checksum");
        expect(error.message).toMatch(/^tiny-chat\/tiny-chat\.q4\.gguf is corrupt after two downloads \(sha256 [0-9a-f]{64}, expected [0-9a-f]{64} \(from the catalogue\)\)\. It was deleted;/);
        expect(filesUnder(setup.modelsDir)).toEqual([]);
        expect(setup.hub.contentRequests(chatPath)).toHaveLength(2);
    });

    it("without a catalogue hash, the hub's X-Linked-Etag is what is checked", async () => {
        setup.hub.switches.corruptTimes["onnx/model_quantized.onnx"] = 99;
        const error = await failure({only: ["tiny-embed"]});
        expect(error.message).toContain("(from the hub)");
        expect(filesUnder(path.join(setup.modelsDir, "tiny-embed"))).toEqual(["config.json", "config.json.sha256"]);
    });

    it("with no hash from the catalogue or the hub, the file is refused by default, naming it and how to go on", async () => {
        setup.hub.switches.linkedEtag = false;
        const error = await run({only: ["tiny-embed"]}).then(() => null, (caught: unknown) => caught as Error);
        expect(error?.message).toMatch(/tiny-embed\/config\.json cannot be verified: no sha256 for it is pinned in the catalogue/);
        expect(error?.message).toContain("--allow-unverified");
        expect(filesUnder(setup.modelsDir).filter((file) => !file.endsWith(".part"))).not.toContain("tiny-embed/config.json");
    });

    it("--allow-unverified accepts such a file on trust: the computed hash is recorded, flagged, and guards the file from then on", async () => {
        setup.hub.switches.linkedEtag = false;
        await run({only: ["tiny-embed"], allowUnverified: true});
        expect(setup.output.text()).toMatch(/tiny-embed\/onnx\/model_quantized\.onnx: done, .*sha256 [0-9a-f]{64} recorded \(NOT verified, accepted on trust with --allow-unverified\)/);
        expect(setup.output.text()).toMatch(/"sha256": "[0-9a-f]{64}" \(not verified\)/);
        setup.hub.requests.length = 0;
        await run({only: ["tiny-embed"]});
        expect(setup.hub.requests).toEqual([]);
        expect(fs.readFileSync(path.join(setup.modelsDir, "tiny-embed/onnx/model_quantized.onnx"))).toEqual(embedModel.content);
    });

    it("refuses redirects to data:, file: and other schemes, and http: to another host, saving nothing", async () => {
        for (const location of ["data:application/json,{\"evil\":true}", "file:///etc/hostname", "ftp://127.0.0.1/x", "http://evil.example/cdn/0"]) {
            setup.hub.switches.redirectLocation = location;
            const error = await run({only: ["tiny-chat"]}).then(() => null, (caught: unknown) => caught as Error);
            expect(error?.message, location).toMatch(/redirected .*tiny-chat\.q4\.gguf to a '(data|file|ftp|http):' URL .*Nothing was saved/);
            expect(filesUnder(setup.modelsDir).filter((file) => file.startsWith("tiny-chat/"))).toEqual([]);
        }
    });

    it("a wrong size is caught like a wrong hash", async () => {
        setup.catalogue[0].files[0].size = chatFile.content.length + 1;
        const error = await failure();
        expect(error.message).toContain(`size ${chatFile.content.length} bytes, expected ${chatFile.content.length + 1}`);
        expect(filesUnder(setup.modelsDir)).toEqual([]);
    });
});

describe("hub errors", () => {
    it("404 names the repo, revision and file", async () => {
        setup.hub.switches.fail[chatPath] = {status: 404, code: "EntryNotFound", message: "Entry not found"};
        const error = await failure();
        expect(error.kind).toBe("notFound");
        expect(error.message).toBe(`Not found: test-org/tiny-chat-GGUF (file ${chatPath} at revision ${setup.catalogue[0].revision}) (404 EntryNotFound: Entry not found). ` +
            "The catalogue lists a file the repo does not have at that revision.");
        expect(filesUnder(setup.modelsDir)).toEqual([]);
    });

    it("a wrong revision says the pinned commit is wrong", async () => {
        setup.catalogue[0].revision = "1".repeat(40);
        const error = await failure();
        expect(error.message).toBe(`Revision ${"1".repeat(40)} of test-org/tiny-chat-GGUF not found (404 RevisionNotFound: Entry not found). The catalogue's pinned commit is wrong.`);
    });

    it("401 without a token says to accept the licence and set HF_TOKEN", async () => {
        setup.hub.switches.gated["test-org/tiny-chat-GGUF"] = "hf_right";
        const error = await failure();
        expect(error.kind).toBe("auth");
        expect(error.message).toContain("is gated or private (401 GatedRepo");
        expect(error.message).toContain("set HF_TOKEN to an access token from https://huggingface.co/settings/tokens");
    });

    it("403 with a token says the token's account must accept the licence; the right token works", async () => {
        setup.hub.switches.gated["test-org/tiny-chat-GGUF"] = "hf_right";
        const error = await failure({hub: {hfEndpoint: setup.hub.url, hfToken: "hf_wrong"}});
        expect(error.message).toMatch(/^HF_TOKEN has no access to test-org\/tiny-chat-GGUF .*\(403 GatedRepo: Access to this model is restricted\.\)\. The model is gated: accept its licence at http:\/\/127\.0\.0\.1:\d+\/test-org\/tiny-chat-GGUF with the account the token belongs to\.$/);
        await run({hub: {hfEndpoint: setup.hub.url, hfToken: "hf_right"}});
        expect(fs.readFileSync(target())).toEqual(chatFile.content);
    });

    it("5xx is retried, then reported as the hub being busy, with no file left", async () => {
        setup.hub.switches.fail[chatPath] = {status: 503};
        const error = await failure();
        expect(error.kind).toBe("http");
        expect(setup.hub.requests.map((request) => request.status)).toEqual([503, 503, 503, 503, 503, 503]);
        expect(setup.output.text()).toMatch(/answered 503 for test-org\/tiny-chat-GGUF \(file tiny-chat\.q4\.gguf at revision [0-9a-f]{40}\)\. Retrying \(5 of 5\)\./);
        expect(error.message).toMatch(/answered 503 for test-org\/tiny-chat-GGUF .* try again later\.$/);
        expect(filesUnder(setup.modelsDir)).toEqual([]);
    });

    it("the output of a run on a terminal redraws one line per file", async () => {
        const tty = collect(true);
        await run({out: tty});
        expect(tty.text()).toContain("\r\x1b[2Ktiny-chat/tiny-chat.q4.gguf  [");
        expect(tty.text()).toMatch(/\r\x1b\[2Ktiny-chat\/tiny-chat\.q4\.gguf: done, 300 kB in [\d.]+s \(.*\/s\), sha256 verified \(catalogue\)\n/);
    });
});
