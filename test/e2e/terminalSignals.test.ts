import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { npmRunGatedServer } from "../support/npmRunGatedServer.js";
import { readSse } from "../support/startTestServer.js";
import { gateModel } from "../support/capabilities/gateCapability.js";

// Ctrl-C in a terminal (and systemd's stop) signals the whole process group: npm and node each get
// SIGINT, and npm forwards it to node once more. That must be one graceful shutdown: in-flight
// streams finish, exit code 0. The server runs under npm's run-script as `npm start` does
// (`npm run test:gated-server`: the same `exec node` script, plus the test-only gate capability of
// test/support/gatedServerMain.ts so a stream is in flight for sure), in a process group of its own.
let dir: string;
beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-test-signals-"));
    fs.writeFileSync(path.join(dir, "models.json"), JSON.stringify({models: [gateModel(path.join(dir, "models.json"))]}));
});
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

function childrenOf(pid: number): number[] {
    return fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).flatMap((entry) => {
        try {
            const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
            return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid ? [Number(entry)] : [];
        } catch {
            return [];
        }
    });
}

describe("signals as a terminal sends them", () => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
        it(`${signal} to npm's whole process group: one graceful shutdown, the stream in flight ends normally, exit code 0`, async () => {
            const {npm, url, exited, output, killGroup} = await npmRunGatedServer(path.join(dir, "models.json"));
            try {
                const stream = await fetch(`${url}/v1/gate/hold`, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({model: "gate"})});
                const events = readSse(stream);
                expect(await eventually(async () => (await (await fetch(`${url}/health`)).json() as {models: {gate: {busy: number}}}).models.gate.busy === 1)).toBe(true);

                const node = childrenOf(npm.pid!).find((pid) => fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("gatedServerMain"))
                    ?? childrenOf(npm.pid!).flatMap(childrenOf).find((pid) => fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("gatedServerMain"));
                process.kill(-npm.pid!, signal);
                expect(await eventually(() => output().includes(`${signal}: shutting down`), 1000), output()).toBe(true);
                // npm forwards the signal once more; when exactly is npm's business, so the test sends that copy itself too.
                process.kill(node!, signal);
                expect(await eventually(() => output().includes(`${signal} again`), 1000), output()).toBe(true);
                expect(output()).not.toContain("exiting now");
                // The stream is still in flight; let it finish.
                process.kill(node!, "SIGUSR2");
                const {events: received} = await events;
                expect(received.map((event) => event.event)).toEqual(["held", "released"]);
                expect(await exited).toBe(0);
            } finally {
                killGroup();
            }
        }, 120_000);
    }
});
