import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadHubConfig, loadStartOptions } from "../../src/config.js";
import { DownloadProgress } from "../../src/download/DownloadProgress.js";
import { errorForFailure } from "../../src/download/errorForFailure.js";
import { formatBytes } from "../../src/download/formatBytes.js";
import { hashSidecar } from "../../src/download/hashSidecar.js";
import { hubUrl } from "../../src/download/hubUrl.js";
import { writeManifest } from "../../src/download/writeManifest.js";
import { collect } from "./fixtures.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-pieces-"));
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

describe("hubUrl", () => {
    it("builds the resolve URL with each segment encoded and the slashes kept", () => {
        expect(hubUrl("https://huggingface.co/", "Qwen/Qwen2.5-0.5B-Instruct-GGUF", "a".repeat(40), "sub dir/model#1.gguf"))
            .toBe(`https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/${"a".repeat(40)}/sub%20dir/model%231.gguf`);
        expect(hubUrl("http://mirror.local/hf", "o/n", "b".repeat(40), "f")).toBe(`http://mirror.local/hf/o/n/resolve/${"b".repeat(40)}/f`);
    });
});

describe("config for the downloader and --download", () => {
    it("reads HF_ENDPOINT (trailing slash dropped) and HF_TOKEN, with defaults", () => {
        expect(loadHubConfig({})).toEqual({hfEndpoint: "https://huggingface.co", hfToken: null});
        expect(loadHubConfig({HF_ENDPOINT: " https://hf-mirror.example/ ", HF_TOKEN: " hf_x "})).toEqual({hfEndpoint: "https://hf-mirror.example", hfToken: "hf_x"});
        expect(() => loadHubConfig({HF_ENDPOINT: "huggingface.co"})).toThrow(ConfigError);
        expect(() => loadHubConfig({HF_ENDPOINT: "ftp://x"})).toThrow(/HF_ENDPOINT must be an http\(s\) URL/);
    });

    it("npm start takes --download", () => {
        expect(loadStartOptions([], {}).download).toBe(false);
        expect(loadStartOptions(["--download", "--port", "0"], {})).toMatchObject({download: true, config: {port: 0}});
    });
});

describe("formatBytes", () => {
    it.each([[0, "0 B"], [999, "999 B"], [1000, "1.00 kB"], [1_054_368, "1.05 MB"], [491_400_000, "491 MB"], [12_300_000_000, "12.3 GB"]])("%d -> %s", (bytes, text) => {
        expect(formatBytes(bytes)).toBe(text);
    });
});

describe("DownloadProgress", () => {
    it("off a terminal: a line at the start, one per 10%, one at the end", () => {
        const out = collect(false);
        let now = 0;
        const progress = new DownloadProgress(out, () => now);
        progress.start("m/file.gguf", 1_000_000, 0);
        for (let i = 0; i < 100; i++) {
            now += 10;
            progress.advance(10_000);
        }
        progress.done("sha256 verified (catalogue)");
        const lines = out.text().trimEnd().split("\n");
        expect(lines[0]).toBe("m/file.gguf: downloading 1.00 MB");
        expect(lines.slice(1, -1)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90].map((percent) =>
            expect.stringMatching(new RegExp(`^m/file\\.gguf: ${percent}% \\(.* of 1\\.00 MB, 1\\.00 MB/s, ETA 0:\\d\\d\\)$`))));
        expect(lines.at(-1)).toBe("m/file.gguf: done, 1.00 MB in 1.0s (1.00 MB/s), sha256 verified (catalogue)");
    });

    it("on a terminal: one line redrawn in place with bar, %, bytes, speed and ETA", () => {
        const out = collect(true);
        let now = 0;
        const progress = new DownloadProgress(out, () => now);
        progress.start("m/file.gguf", 1_000_000, 500_000);
        now = 1000;
        progress.advance(250_000);
        expect(out.text()).toContain("\r\x1b[2Km/file.gguf  [###############-----]  75% 750 kB of 1.00 MB, 250 kB/s, ETA 0:01");
    });
});

describe("errorForFailure", () => {
    const failure = (code: string) => errorForFailure(Object.assign(new TypeError("fetch failed"), {cause: Object.assign(new Error(code), {code})}), "huggingface.co", path.join(dir, "x.part"), 5_000_000);

    it("no network: says what to check, not resumable", () => {
        expect(failure("ENOTFOUND")).toMatchObject({resumable: false, error: {kind: "network", message: "Cannot reach huggingface.co (ENOTFOUND): check the network, or set HF_ENDPOINT to a reachable mirror."}});
    });

    it("a disk full: what is needed and free, and that the download resumes", () => {
        const {error, resumable} = errorForFailure(Object.assign(new Error("no space"), {code: "ENOSPC"}), "huggingface.co", path.join(dir, "x.part"), 5_000_000);
        expect(resumable).toBe(false);
        expect(error.kind).toBe("disk");
        expect(error.message).toMatch(/^Disk full writing .*x\.part: 5\.00 MB more needed, .* free\. Free some space .* the partial file is kept and the download resumes\.$/);
    });

    it("a TLS interception: points at NODE_EXTRA_CA_CERTS", () => {
        expect(failure("SELF_SIGNED_CERT_IN_CHAIN").error.message).toContain("NODE_EXTRA_CA_CERTS");
    });

    it("a connection cut mid-file is resumable", () => {
        expect(failure("UND_ERR_SOCKET")).toMatchObject({resumable: true, error: {kind: "network"}});
    });
});

describe("hashSidecar", () => {
    it("is trusted while the file is unchanged, and only re-checked after the file is touched", () => {
        const file = path.join(dir, "model.gguf");
        fs.writeFileSync(file, "abc");
        hashSidecar.write(file, "f".repeat(64));
        expect(fs.readFileSync(`${file}.sha256`, "utf8")).toBe(`${"f".repeat(64)}  model.gguf\n`);
        expect(hashSidecar.read(file, 3)).toEqual({sha256: "f".repeat(64), fresh: true});
        expect(hashSidecar.read(file, 4)).toEqual({sha256: "f".repeat(64), fresh: false});
        const later = new Date(Date.now() + 60_000);
        fs.utimesSync(file, later, later);
        expect(hashSidecar.read(file, 3)?.fresh).toBe(false);
        fs.writeFileSync(`${file}.sha256`, "garbage");
        expect(hashSidecar.read(file, 3)).toBeNull();
    });
});

describe("writeManifest", () => {
    it("refuses to turn a working manifest into one the server would reject", () => {
        const manifest = path.join(dir, "m1.json");
        fs.writeFileSync(path.join(dir, "a.gguf"), "x");
        const before = JSON.stringify({models: [{id: "a", task: "chat", path: "a.gguf"}]});
        fs.writeFileSync(manifest, before);
        expect(() => writeManifest(manifest, [{id: "b", task: "chat", path: "missing.gguf"}])).toThrow(/^Not updating .*m1\.json: the result would not load \(.*'models\[1\]\.path' points to .*missing\.gguf/);
        expect(fs.readFileSync(manifest, "utf8")).toBe(before);
        expect(fs.readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    });

    it("writes into a manifest that was already broken, with a warning", () => {
        const manifest = path.join(dir, "m2.json");
        fs.writeFileSync(manifest, JSON.stringify({models: [{id: "gone", task: "chat", path: "gone.gguf"}]}));
        const update = writeManifest(manifest, [{id: "a", task: "chat", path: "a.gguf"}]);
        expect(update.added).toEqual(["a"]);
        expect(update.warnings[0]).toMatch(/already had a problem the server will report: .*gone\.gguf/);
    });
});
