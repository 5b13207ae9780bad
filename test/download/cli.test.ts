import { spawn } from "node:child_process";
import { eventually } from "../support/eventually.js";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ensureModels } from "../../src/download/ensureModels.js";
import { loadCatalogue } from "../../src/download/loadCatalogue.js";
import { loadServedManifest } from "../../src/capabilities/loadServedManifest.js";
import { chatFile, collect, setUp, tearDown, type Setup } from "./fixtures.js";

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const tsxLoader = pathToFileURL(path.join(projectRoot, "node_modules/tsx/dist/loader.mjs")).href;

let setup: Setup;
beforeEach(async () => setup = await setUp());
afterEach(async () => tearDown(setup));

/** Runs a TypeScript entry point as its own process; resolves with exit code and output. */
function runProcess(script: string, args: string[], options: {cwd?: string, env?: Record<string, string>} = {}) {
    const child = spawn(process.execPath, ["--import", tsxLoader, path.join(projectRoot, script), ...args], {
        cwd: options.cwd ?? projectRoot,
        env: {...process.env, HF_ENDPOINT: setup.hub.url, HF_TOKEN: "", MODELS_CONFIG: "", LOG_LEVEL: "warn", ...options.env},
        stdio: ["ignore", "pipe", "pipe"]
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (data) => stdout += data);
    child.stderr.on("data", (data) => stderr += data);
    return new Promise<{code: number | null, stdout: string, stderr: string}>((resolve) => child.on("close", (code) => resolve({code, stdout, stderr})));
}

const cli = (...args: string[]) => runProcess("scripts/download-models/main.ts", ["--catalogue", setup.cataloguePath, "--manifest", setup.manifestPath, ...args]);

describe("npm run download-models (spawned)", () => {
    it("-- owner/repo/file.gguf fetches any hub repository's file through the hub's API and adds it to the manifest", async () => {
        const result = await cli("test-org/extra/sub dir/extra model.gguf");
        expect(result.stderr).toBe("");
        expect(result.code).toBe(0);
        expect(result.stdout).toMatch(/extra model\.gguf: done, 100 kB in .*sha256 verified \(catalogue\)/);
        expect(loadServedManifest(setup.manifestPath).map((entry) => [entry.id, entry.task])).toEqual([["extra-model", "chat"]]);
        const wrong = await cli("not a repo");
        expect(wrong.code).toBe(2);
        expect(wrong.stderr).toContain("is not a hub repository");
    });

    it("--list, --dry-run, a download, then a second run that downloads nothing", async () => {
        const list = await cli("--list");
        expect(list.code).toBe(0);
        expect(list.stdout).toMatch(/^tiny-chat\s+chat\s+yes\s+300 kB\s+apache-2.0\s+missing\s+gpt-3.5-turbo, gpt-4o-mini, tiny-latest$/m);

        const dryRun = await cli("--dry-run");
        expect(dryRun.code).toBe(0);
        expect(dryRun.stdout).toContain("Dry run: would download 3 files, 550 kB + 1 file of unknown size; 0 already present. Nothing was written.");
        expect(setup.hub.requests).toEqual([]);

        const download = await cli();
        expect(download.stderr).toBe("");
        expect(download.code).toBe(0);
        expect(download.stdout).toContain("Downloading 3 files, 550 kB + 1 file of unknown size, into");
        expect(download.stdout).toMatch(/tiny-chat\/tiny-chat\.q4\.gguf: done, 300 kB in .*, sha256 verified \(catalogue\)/);
        expect(loadServedManifest(setup.manifestPath).map((entry) => entry.id)).toEqual(["tiny-chat", "tiny-embed"]);

        setup.hub.requests.length = 0;
        const again = await cli();
        expect(again).toMatchObject({code: 0, stdout: "All 3 files already present; nothing to download.\n", stderr: ""});
        expect(setup.hub.requests).toEqual([]);

        const listed = await cli("--list", "--only", "chat");
        expect(listed.stdout).toMatch(/^tiny-chat\s+.*\s+installed\s+/m);
        expect(listed.stdout).not.toContain("tiny-embed");
    });

    it("exit 1 with the message only (no stack) on a failure, 2 on a usage error", async () => {
        setup.hub.switches.fail["tiny-chat.q4.gguf"] = {status: 404, code: "EntryNotFound"};
        const notFound = await cli("--only", "chat");
        expect(notFound.code).toBe(1);
        expect(notFound.stderr).toMatch(/^error: Not found: test-org\/tiny-chat-GGUF \(file tiny-chat\.q4\.gguf at revision [0-9a-f]{40}\) \(404 EntryNotFound\)\./);
        expect(notFound.stderr).not.toMatch(/\n\s+at /);

        const unknownModel = await cli("--only", "gpt-5");
        expect(unknownModel.code).toBe(2);
        expect(unknownModel.stderr).toContain("error: --only gpt-5: no such task or model.");

        const unknownFlag = await cli("--al");
        expect(unknownFlag.code).toBe(2);
        expect(unknownFlag.stderr).toMatch(/^error: Unknown option '--al'.*\n\nUsage: npm run download-models/);
    });
});

describe("npm start on a first run (spawned, in an empty folder)", () => {
    it("without models: serves the demo model offline, and says what is missing and how to get the real ones", async () => {
        const child = spawn(process.execPath, ["--import", tsxLoader, path.join(projectRoot, "src/main.ts"), "--port", "0"], {
            cwd: setup.dir, env: {...process.env, HF_ENDPOINT: setup.hub.url, MODELS_CONFIG: "", LOG_LEVEL: "warn", GPU: "off"}, stdio: ["ignore", "pipe", "pipe"]
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (data) => stdout += data);
        child.stderr.on("data", (data) => stderr += data);
        const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
        try {
            expect(await eventually(() => stdout.includes("Ready."), 3000), stdout + stderr).toBe(true);
            expect(stderr).toContain(`No models yet: ${path.join("models", "models.json")} does not exist. Serving the demo model for now`);
            for (const entry of loadCatalogue().filter((entry) => entry.default))
                expect(stderr).toMatch(new RegExp(`^\\s+${entry.id}\\s+${entry.task}\\s+`, "m"));
            expect(stderr).toContain("npm run download-models");
            expect(stderr).toContain("npm start -- --download");
            expect(stdout).toContain("stories260K (chat)");
            const url = /listening on (http:\/\/\S+)\/v1/.exec(stdout)![1];
            const response = await fetch(`${url}/v1/completions`, {method: "POST", headers: {"Content-Type": "application/json"},
                body: JSON.stringify({model: "stories260K", prompt: "Once upon a time", max_tokens: 12, temperature: 0})});
            expect(response.status).toBe(200);
            expect(((await response.json()) as {choices: {text: string}[]}).choices[0].text.length).toBeGreaterThan(10);
            child.kill("SIGTERM");
            expect(await exited).toBe(0);
        } finally {
            child.kill("SIGKILL");
        }
    });

    it("a missing manifest the user named is still the server's own error", async () => {
        const result = await runProcess("src/main.ts", ["--port", "0", "--models", path.join(setup.dir, "elsewhere.json")], {cwd: setup.dir});
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(/^error: Model manifest not found: .*elsewhere\.json$/m);
    });

    it("--download that cannot download exits 1 with the reason, no stack trace", async () => {
        await setup.hub.close();
        const result = await runProcess("src/main.ts", ["--port", "0", "--download"], {cwd: setup.dir});
        setup.hub = await setup.hub.start();
        expect(result.code).toBe(1);
        // Placeholder revisions are refused before any request; real ones find the hub gone.
        expect(result.stderr).toMatch(/^error: (The catalogue has no pinned revision yet|Cannot reach 127\.0\.0\.1:\d+ \(ECONNREFUSED\))/m);
        expect(result.stderr).not.toMatch(/\n\s+at /);
        expect(fs.existsSync(path.join(setup.dir, "models/models.json"))).toBe(false);
    });
});

describe("ensureModels (npm start -- --download, in-process)", () => {
    it("downloads the default set into the manifest's folder, then lets the server start", async () => {
        const out = collect();
        const ready = await ensureModels({
            modelsConfig: setup.manifestPath, download: true, hub: () => ({hfEndpoint: setup.hub.url, hfToken: null}),
            out, error: () => {}, catalogue: () => setup.catalogue
        });
        expect(ready).toBe("serve");
        expect(loadServedManifest(setup.manifestPath).map((entry) => entry.id)).toEqual(["tiny-chat", "tiny-embed"]);
        expect(fs.readFileSync(path.join(setup.modelsDir, "tiny-chat/tiny-chat.q4.gguf"))).toEqual(chatFile.content);
        expect(out.text()).toContain("tiny-chat/tiny-chat.q4.gguf: downloading 300 kB");
    });
});
