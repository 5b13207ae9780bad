import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiKeyStore } from "../../src/auth/ApiKeyStore.js";
import { readApiKeyFile, writeApiKeyFile } from "../../src/auth/ApiKeyFile.js";
import { generateApiKey, hashApiKey } from "../../src/auth/keyHash.js";
import { runKeysCli } from "../../src/auth/keysCli.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const keyPattern = /^sk-local-[A-Za-z0-9_-]{43}$/;

let dir: string;
let keysFile: string;

beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "api-keys-test-"));
    keysFile = path.join(dir, "api-keys.json");
});

afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
});

async function cli(...args: string[]) {
    let stdout = "";
    let stderr = "";
    const code = await runKeysCli(["--file", keysFile, ...args], {
        stdout: (text) => { stdout += text; },
        stderr: (text) => { stderr += text; }
    });
    return { code, stdout, stderr };
}

async function addKey(name: string) {
    const result = await cli("add", name);
    expect(result.code).toBe(0);
    const key = result.stdout.split("\n").find((line) => keyPattern.test(line));
    expect(key).toBeDefined();
    return key!;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("keyHash", () => {
    it("generates distinct keys in the documented format and hashes them", () => {
        const a = generateApiKey();
        const b = generateApiKey();
        expect(a).toMatch(keyPattern);
        expect(a).not.toBe(b);
        expect(hashApiKey(a)).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(hashApiKey("abc")).toBe("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    });
});

describe("keys CLI", () => {
    it("adds, lists and revokes keys", async () => {
        const key = await addKey("ci");
        await addKey("dev.laptop_1");

        const added = await cli("add", "other");
        expect(added.stdout).toMatch(/save this key now/i);

        const listed = await cli("list");
        expect(listed.code).toBe(0);
        expect(listed.stdout).toMatch(/^ci\s+\d{4}-\d\d-\d\dT/m);
        expect(listed.stdout).toMatch(/^dev\.laptop_1\s+/m);
        expect(listed.stdout).not.toContain("sha256:");
        expect(listed.stdout).not.toContain(key);

        const revoked = await cli("revoke", "ci");
        expect(revoked.code).toBe(0);
        expect(readApiKeyFile(keysFile).keys.map((k) => k.name)).toEqual(["dev.laptop_1", "other"]);

        await cli("revoke", "dev.laptop_1");
        await cli("revoke", "other");
        expect((await cli("list")).stdout).toBe("no keys\n");
    });

    it("says what the first key and revoking the last key do to a running server", async () => {
        const first = await cli("add", "a");
        expect(first.stdout).toContain("This is the only key: a running server that had none now requires a key on every /v1 request");
        expect((await cli("add", "b")).stdout).not.toContain("only key");
        expect((await cli("revoke", "a")).stdout).not.toContain("last key");
        const last = await cli("revoke", "b");
        expect(last.code).toBe(0);
        expect(last.stdout).toContain("That was the last key: the server is now locked, every /v1 request gets a 401, until you add a key with `npm run keys -- add <name>`");
        expect(last.stdout).toContain(`delete ${keysFile} and restart`);
    });

    it("lists no keys when the file does not exist", async () => {
        expect(await cli("list")).toEqual({ code: 0, stdout: "no keys\n", stderr: "" });
        expect(fs.existsSync(keysFile)).toBe(false);
    });

    it("stores only the hash, in a file with mode 0600", async () => {
        const key = await addKey("ci");
        const text = fs.readFileSync(keysFile, "utf8");
        expect(text).not.toContain(key);
        expect(text).not.toContain(key.slice("sk-local-".length));
        expect(text).toContain(hashApiKey(key));
        if (process.platform !== "win32")
            expect(fs.statSync(keysFile).mode & 0o777).toBe(0o600);
        // No temp files are left behind by the atomic write.
        expect(fs.readdirSync(dir)).toEqual(["api-keys.json"]);
    });

    it("refuses a duplicate name", async () => {
        await addKey("ci");
        const result = await cli("add", "ci");
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('"ci" already exists');
        expect(result.stdout).toBe("");
        expect(readApiKeyFile(keysFile).keys).toHaveLength(1);
    });

    it("refuses invalid names", async () => {
        for (const name of ["", "a b", "x".repeat(65), "ключ", "a/b"]) {
            const result = await cli("add", name);
            expect(result.code, name).toBe(1);
            expect(result.stderr).toContain("invalid key name");
        }
        expect((await cli("add", "x".repeat(64))).code).toBe(0);
    });

    it("fails to revoke an unknown key", async () => {
        await addKey("ci");
        const result = await cli("revoke", "nope");
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('no key named "nope"');
        expect(readApiKeyFile(keysFile).keys).toHaveLength(1);
    });

    it("exits 2 with usage on bad usage", async () => {
        for (const args of [[], ["frobnicate"], ["add"], ["add", "a", "b"], ["list", "x"], ["revoke"], ["list", "--bogus"]]) {
            const result = await cli(...args);
            expect(result.code, args.join(" ")).toBe(2);
            expect(result.stderr).toContain("usage:");
        }
        const help = await cli("--help");
        expect(help.code).toBe(0);
        expect(help.stdout).toContain("usage:");
    });

    it("reports a malformed file with exit 1", async () => {
        fs.writeFileSync(keysFile, "{ nope");
        const result = await cli("list");
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(keysFile);
    });
});

describe("ApiKeyStore", () => {
    it("verifies the printed key and nothing else", async () => {
        const key = await addKey("ci");
        const store = new ApiKeyStore({ plainKeys: [], keysFile });
        expect(store.enabled).toBe(true);
        // Its identity is its hash, as the file stores it (what it owns follows the key, not the name).
        expect(store.verify(key)).toEqual({ name: "ci", hash: hashApiKey(key), role: "user" });

        const last = key.at(-1) === "A" ? "B" : "A";
        for (const wrong of [generateApiKey(), key.slice(0, -1) + last, "X" + key.slice(1), "", key + "x".repeat(10_000), key.slice(0, -1), ` ${key}`])
            expect(store.verify(wrong)).toBeNull();
    });

    it("verifies env keys with env:N names", () => {
        const store = new ApiKeyStore({ plainKeys: ["first-secret", "second-secret"], keysFile });
        expect(store.enabled).toBe(true);
        expect(store.verify("first-secret")).toMatchObject({ name: "env:1" });
        expect(store.verify("second-secret")).toMatchObject({ name: "env:2" });
        expect(store.verify("third-secret")).toBeNull();
        expect(store.verify("")).toBeNull();
    });

    it("verifies env and file keys side by side", async () => {
        const key = await addKey("ci");
        const store = new ApiKeyStore({ plainKeys: ["env-secret"], keysFile });
        expect(store.verify("env-secret")).toMatchObject({ name: "env:1" });
        expect(store.verify(key)).toMatchObject({ name: "ci" });
    });

    it("is disabled with nothing configured", () => {
        const store = new ApiKeyStore({ plainKeys: [], keysFile });
        expect(store.enabled).toBe(false);
        expect(store.verify("")).toBeNull();
        expect(store.verify("anything")).toBeNull();

        expect(store.state).toBe("open");
    });

    it("is locked when the keys file exists but holds no key (what revoking the last key leaves), until a key is added", async () => {
        writeApiKeyFile(keysFile, { keys: [] });
        const notices: string[] = [];
        const store = new ApiKeyStore({ plainKeys: [], keysFile, reloadIntervalMs: 0, onNotice: (message) => notices.push(message) });
        expect(store.enabled).toBe(true);
        expect(store.state).toBe("locked");
        const key = await addKey("ops");
        expect(store.state).toBe("on");
        expect(store.verify(key)).toMatchObject({ name: "ops" });
        expect(notices).toEqual(["An API key was added: the server is unlocked."]);
    });

    it("says when auth turns on, and when the last key's revocation locks the server", async () => {
        const notices: string[] = [];
        const store = new ApiKeyStore({ plainKeys: [], keysFile, reloadIntervalMs: 0, onNotice: (message) => notices.push(message) });
        expect(store.state).toBe("open");
        await addKey("first");
        store.check();
        expect(notices).toEqual(["An API key was added: auth is now on, every /v1 request needs `Authorization: Bearer <key>`."]);
        await addKey("second");
        await cli("revoke", "first");
        store.check();
        expect(notices).toHaveLength(1);
        await cli("revoke", "second");
        store.check();
        expect(store.state).toBe("locked");
        expect(notices[1]).toContain("The last API key was revoked: the server is locked, every /v1 request gets a 401");
        expect(notices[1]).toContain("npm run keys -- add <name>");
        expect(notices[1]).toContain(`delete ${keysFile} and restart`);
    });

    it("stops accepting a revoked key after the reload interval, without a restart", async () => {
        const key = await addKey("ci");
        const kept = await addKey("kept");
        const store = new ApiKeyStore({ plainKeys: [], keysFile, reloadIntervalMs: 30 });
        expect(store.verify(key)).toMatchObject({ name: "ci" });

        expect((await cli("revoke", "ci")).code).toBe(0);
        await sleep(50);
        expect(store.verify(key)).toBeNull();
        expect(store.verify(kept)).toMatchObject({ name: "kept" });
    });

    it("does not re-read the file more often than the reload interval", async () => {
        const key = await addKey("ci");
        const store = new ApiKeyStore({ plainKeys: [], keysFile, reloadIntervalMs: 60_000 });
        await cli("revoke", "ci");
        expect(store.verify(key)).toMatchObject({ name: "ci" });
    });

    it("picks up keys added while running, and stays enabled after the last one is revoked", async () => {
        const store = new ApiKeyStore({ plainKeys: [], keysFile, reloadIntervalMs: 0 });
        expect(store.enabled).toBe(false);

        const key = await addKey("late");
        expect(store.enabled).toBe(true);
        expect(store.verify(key)).toMatchObject({ name: "late" });

        await cli("revoke", "late");
        expect(store.verify(key)).toBeNull();
        expect(store.enabled).toBe(true);

        fs.rmSync(keysFile);
        expect(store.verify(key)).toBeNull();
        expect(store.enabled).toBe(true);
    });

    it("keeps the last good keys and warns once when the file turns malformed at runtime", async () => {
        const key = await addKey("ci");
        const warnings: string[] = [];
        const store = new ApiKeyStore({ plainKeys: [], keysFile, reloadIntervalMs: 0, onWarning: (message) => warnings.push(message) });

        fs.writeFileSync(keysFile, '{ "keys": [ { "name": "ci" } ] }');
        expect(() => store.verify(key)).not.toThrow();
        expect(store.verify(key)).toMatchObject({ name: "ci" });
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toContain(keysFile);
        expect(warnings[0]).toContain("keys[0].hash");

        // Once fixed, the file is used again.
        const other = generateApiKey();
        writeApiKeyFile(keysFile, { keys: [{ name: "other", hash: hashApiKey(other), created: new Date().toISOString() }] });
        expect(store.verify(key)).toBeNull();
        expect(store.verify(other)).toMatchObject({ name: "other" });
        expect(warnings).toHaveLength(1);
    });

    it("throws at open on a malformed file, naming the file and the field", () => {
        fs.writeFileSync(keysFile, "not json");
        expect(() => new ApiKeyStore({ plainKeys: [], keysFile })).toThrow(keysFile);

        const cases: [unknown, string][] = [
            [[], '{ "keys": [...] }'],
            [{ keys: [42] }, "keys[0]"],
            [{ keys: [{ hash: hashApiKey("a"), created: "2024-01-01T00:00:00Z" }] }, "keys[0].name"],
            [{ keys: [{ name: "a", hash: "sha256:zz", created: "2024-01-01T00:00:00Z" }] }, "keys[0].hash"],
            [{ keys: [{ name: "a", hash: hashApiKey("a"), created: "yesterday" }] }, "keys[0].created"],
            [{ keys: [{ name: "a", hash: hashApiKey("a"), created: "2024-01-01T00:00:00Z" }, { name: "a", hash: hashApiKey("b"), created: "2024-01-01T00:00:00Z" }] }, "keys[1].name"]
        ];
        for (const [json, field] of cases) {
            fs.writeFileSync(keysFile, JSON.stringify(json));
            expect(() => new ApiKeyStore({ plainKeys: [], keysFile })).toThrow(new RegExp(`${escape(keysFile)}.*${escape(field)}`));
        }
    });
});

describe("scripts/keys.ts", () => {
    it("runs as a real process", async () => {
        const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "scripts/keys.ts", "--file", keysFile, "add", "ci"], { cwd: repoRoot });
        const key = stdout.split("\n").find((line) => keyPattern.test(line));
        expect(key).toMatch(keyPattern);
        expect(new ApiKeyStore({ plainKeys: [], keysFile }).verify(key!)).toMatchObject({ name: "ci" });
    }, 30_000);

    it("exits 2 on bad usage", async () => {
        const error = await promisify(execFile)(process.execPath, ["--import", "tsx", "scripts/keys.ts", "--file", keysFile, "bogus"], { cwd: repoRoot })
            .then(() => null, (error: { code: number, stderr: string }) => error);
        expect(error?.code).toBe(2);
        expect(error?.stderr).toContain("usage:");
    }, 30_000);
});

function escape(text: string) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
