import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runKeysCli } from "../../src/auth/keysCli.js";
import { allSettings } from "../../src/config.js";
import { readSse } from "../support/startTestServer.js";
import { gateModel } from "../support/capabilities/gateCapability.js";
import { eventually } from "../support/eventually.js";
import { holdWorkers } from "../support/holdWorkers.js";
import { gatedServerEntry, runServerProcess, spawnServer, type SpawnedServer } from "../support/spawnServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

let dir: string;
const manifest = (name: string, models: unknown) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, JSON.stringify(models));
    return file;
};
const goodManifest = () => manifest("good.json", {models: [{id: "tiny", task: "chat", path: tinyChatModelPath, contextSize: 512, parallel: 2}]});

beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-process-"));
});
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

// The processes below exit at once (no model loads): each test runs its own, all of them side by side (so each is
// given more time than one alone needs). Each case writes its own manifest, and asserts through its test context's
// `expect` (tests running concurrently).
describe.concurrent("startup errors end the process with a clear message and exit code 1", {timeout: 60_000}, () => {
    it.for([
        ["a field of the wrong type", {models: [{id: "x", task: "chat", path: "a.gguf", contextSize: "big"}]}, /Invalid model manifest .*'models\[0\]\.contextSize': expected an integer/],
        ["an unknown task", {models: [{id: "x", task: "video", path: "a.gguf"}]}, /'models\[0\]\.task'/],
        ["a misspelled field", {models: [{id: "x", task: "chat", path: "a.gguf", contextsize: 5}]}, /Unrecognized parameter: 'models\[0\]\.contextsize'/],
        ["a missing model file", {models: [{id: "x", task: "chat", path: "nothing-here.gguf"}]}, /'models\[0\]\.path' points to .*nothing-here\.gguf, which does not exist/],
        ["a duplicate name", {models: [{id: "x", task: "chat", path: tinyChatModelPath}, {id: "y", task: "chat", path: tinyChatModelPath, aliases: ["x"]}]}, /'models\[1\]\.aliases\[0\]' uses the name 'x'/]
    ] as const)("%s", async ([name, content, message], {expect}) => {
        const {exited, output} = runServerProcess(["--models", manifest(`bad ${name}.json`, content), "--port", "0"]);
        expect(await exited).toBe(1);
        expect(output()).toMatch(message);
        expect(output()).not.toMatch(/\n\s+at /);
    });

    it("a missing manifest", async ({expect}) => {
        const {exited, output} = runServerProcess(["--models", path.join(dir, "none.json"), "--port", "0"]);
        expect(await exited).toBe(1);
        expect(output()).toMatch(/Model manifest not found: .*none\.json/);
    });

    it("a bad flag value", async ({expect}) => {
        const {exited, output} = runServerProcess(["--models", goodManifest(), "--port", "99999"]);
        expect(await exited).toBe(1);
        expect(output()).toContain("port must be an integer from 0 to 65535");
    });

    it("a non-loopback address without any API key", async ({expect}) => {
        const {exited, output} = runServerProcess(["--models", goodManifest(), "--port", "0", "--host", "0.0.0.0"]);
        expect(await exited).toBe(1);
        expect(output()).toContain("Refusing to listen on 0.0.0.0 without API keys");
    });
});

describe.concurrent("--help", {timeout: 60_000}, () => {
    it("exits 0 and lists every flag and environment variable of src/config.ts's table", async ({expect}) => {
        const {exited, output} = runServerProcess(["--help"]);
        expect(await exited).toBe(0);
        const flags = new Set(allSettings.flatMap((setting) => [setting.flag, setting.deprecated?.flag]).filter((flag) => flag != null).map((flag) => `--${flag}`));
        const envs = new Set(allSettings.flatMap((setting) => [setting.env, setting.deprecated?.env]).filter((env) => env != null));
        expect(flags.size).toBeGreaterThan(10);
        expect(envs.size).toBeGreaterThan(15);
        for (const name of [...flags, ...envs])
            expect(output(), name).toMatch(new RegExp(`(^|\\s)${name}\\s`));
        expect(output()).not.toMatch(/^error:/m);
    });

    it("-h works too, and a mistyped flag points to --help", async ({expect}) => {
        const short = runServerProcess(["-h"]);
        const wrong = runServerProcess(["--hepl"]);
        expect(await short.exited).toBe(0);
        expect(short.output()).toContain("Usage: npm start -- [options]");
        expect(await wrong.exited).toBe(1);
        expect(wrong.output()).toContain("npm start -- --help");
    });
});

describe("the server process", () => {
    it("names a preloaded model that fails to load, with its file, and keeps serving the others", async () => {
        const bad = path.join(dir, "broken.gguf");
        fs.writeFileSync(bad, "not a gguf at all");
        const server = await spawnServer(["--preload-all", "--models", manifest("broken.json", {models: [
            {id: "broken", task: "chat", path: bad},
            {id: "tiny", task: "chat", path: tinyChatModelPath, contextSize: 512, parallel: 1}
        ]})]);
        try {
            expect(server.output()).toContain(`Model 'broken' failed to load from ${bad}: `);
            // Not "Ready.": its readiness says otherwise.
            expect(server.output()).toContain("Serving, but not ready: a preloaded model failed to load");
            expect(server.output()).not.toMatch(/^Ready\./m);
            expect(await (await fetch(`${server.url}/health/ready`)).json()).toEqual({status: "unavailable", reason: "failed"});
            const chat = (model: string) => fetch(`${server.url}/v1/chat/completions`, {
                method: "POST", headers: {"Content-Type": "application/json"},
                body: JSON.stringify({model, max_tokens: 2, messages: [{role: "user", content: "hi"}]})
            });
            expect((await chat("tiny")).status).toBe(200);
            const failed = await chat("broken");
            expect(failed.status).toBe(503);
            expect((await failed.json() as {error: {code: string, message: string}}).error).toMatchObject({
                code: "model_load_failed", message: expect.stringContaining(`Model 'broken' failed to load from ${bad}: `)
            });
        } finally {
            expect(await server.stop()).toBe(0);
        }
    });

    // One process for these tests: none of them needs a fresh one. It starts open on loopback, its keys file not there
    // yet; the last test adds a key to that file and revokes it, which leaves the server locked.
    describe("open on loopback, with a keys file to come (one process for these tests)", () => {
        let open: SpawnedServer;
        const keysFile = () => path.join(dir, "rule-keys.json");
        const openArgs = () => ["--models", goodManifest(), "--keys-file", keysFile()];
        beforeAll(async () => {
            open = await spawnServer(openArgs());
        });
        afterAll(async () => {
            expect(await open?.stop()).toBe(0);
        });

        it("prints a startup banner without nested parentheses, saying it runs open on loopback", () => {
            expect(open.output()).toContain("auth off");
            const banner = open.output().split("\n").find((line) => line.includes("listening on"))!;
            let depth = 0;
            for (const char of banner) {
                depth += char === "(" ? 1 : char === ")" ? -1 : 0;
                expect(depth, banner).toBeLessThanOrEqual(1);
            }
            expect(banner).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+\/v1, auth off: /);
        });

        it("gives the same output for the same seed across a restart, with a stable fingerprint that tracks the configuration", async () => {
            const request = {model: "tiny", messages: [{role: "user", content: "Once upon a time"}], max_tokens: 40, temperature: 1, seed: 1234};
            const ask = async (url: string) => (await fetch(`${url}/v1/chat/completions`, {
                method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(request)
            })).json() as Promise<{choices: {message: {content: string}}[], system_fingerprint: string}>;
            /** A fresh process with `args`: its answer, then it stops. */
            const askFresh = async (args: string[]) => {
                const server = await spawnServer(args);
                try {
                    return await ask(server.url);
                } finally {
                    await server.stop();
                }
            };

            const a = await ask(open.url);
            // The same configuration again (the restart), and two others: independent processes, one after the other (three
            // starting side by side beside another test file took a CI run past the ready bound).
            const b = await askFresh(openArgs());
            const c = await askFresh(["--models", goodManifest(), "--threads", "2"]);
            const d = await askFresh(["--models", manifest("ctx.json", {models: [{id: "tiny", task: "chat", path: tinyChatModelPath, contextSize: 1024, parallel: 2}]})]);
            expect(b.choices[0].message.content).toBe(a.choices[0].message.content);
            expect(b.system_fingerprint).toBe(a.system_fingerprint);
            expect(c.system_fingerprint).not.toBe(a.system_fingerprint);
            expect(d.system_fingerprint).not.toBe(a.system_fingerprint);
        }, 120_000);

        // Last: it leaves the server locked.
        it("logs when the first key turns auth on and when revoking the last key locks the server, which then says how to add one", async () => {
            expect(open.output()).toContain("auth off");
            const out: string[] = [];
            const io = {stdout: (text: string) => out.push(text), stderr: (text: string) => out.push(text)};
            expect(await runKeysCli(["--file", keysFile(), "add", "ops"], io)).toBe(0);
            // The server looks at the keys file about once a second: wait for the log line, not for a time.
            expect(await eventually(() => open.output().includes("An API key was added: auth is now on"), 1000)).toBe(true);
            expect((await fetch(`${open.url}/v1/models`)).status).toBe(401);

            expect(await runKeysCli(["--file", keysFile(), "revoke", "ops"], io)).toBe(0);
            expect(out.join("")).toContain("That was the last key: the server is now locked");
            expect(await eventually(() => open.output().includes("The last API key was revoked: the server is locked"), 1000)).toBe(true);
            const locked = await fetch(`${open.url}/v1/models`, {headers: {Authorization: "Bearer anything"}});
            expect(locked.status).toBe(401);
            expect((await locked.json() as {error: {message: string}}).error.message).toContain("No API key exists on this server");

            // A restart with the keys file still empty stays locked, and says so.
            const restarted = await spawnServer(openArgs());
            expect(restarted.output()).toContain("auth on but LOCKED");
            expect(await restarted.stop()).toBe(0);
        });
    });

    it("runs with auth on when keys exist", async () => {
        const keyed = await spawnServer(["--models", goodManifest(), "--host", "0.0.0.0"], {API_KEYS: "sk-a"});
        expect(keyed.output()).toContain("auth on");
        expect(await keyed.stop()).toBe(0);
    });

    it("on SIGTERM finishes in-flight work, then exits 0", async () => {
        const models = {models: [{id: "tiny", task: "chat", path: tinyChatModelPath, contextSize: 512}, gateModel(tinyChatModelPath)]};
        const server = await spawnServer(["--models", manifest("drain.json", models)], {LOG_LEVEL: "info"}, gatedServerEntry);
        const holds = await holdWorkers(server.url, 1);
        const response = await fetch(`${server.url}/v1/chat/completions`, {
            method: "POST", headers: {"Content-Type": "application/json"},
            body: JSON.stringify({model: "tiny", messages: [{role: "user", content: "hi"}], max_tokens: 300, stream: true})
        });
        server.child.kill("SIGTERM");
        // The held request is still in flight when shutdown begins; it is let finish, not cut off.
        expect(await eventually(() => server.output().includes("SIGTERM: shutting down"))).toBe(true);
        server.child.kill("SIGUSR2");
        const [held] = await holds.ended;
        expect(held).toContain("event: released");
        const {raw} = await readSse(response);
        expect(raw.endsWith("data: [DONE]\n\n")).toBe(true);
        expect(await server.exited).toBe(0);
    });

    it("on SIGTERM aborts in-flight work after SHUTDOWN_TIMEOUT_MS", async () => {
        // The gate request holds a worker until it is cancelled: it can never finish by itself, so the
        // process exits only if shutdown aborts it once the timeout has passed.
        const models = {models: [{id: "tiny", task: "chat", path: tinyChatModelPath}, gateModel(tinyChatModelPath)]};
        const server = await spawnServer(["--models", manifest("gated.json", models)], {SHUTDOWN_TIMEOUT_MS: "300"}, gatedServerEntry);
        const holds = await holdWorkers(server.url, 1);
        server.child.kill("SIGTERM");
        expect(await server.exited, server.output()).toBe(0);
        const [held] = await holds.ended;
        expect(held).toContain("event: held");
        expect(held).not.toContain("event: released");
        expect(server.output()).not.toMatch(/Unhandled|134/);
    });
});
