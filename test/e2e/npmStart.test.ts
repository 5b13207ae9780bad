import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { tinyChatModelPath } from "../support/testModels.js";

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Every process below `pid` (children, grandchildren...), read from /proc. */
function descendantsOf(pid: number): number[] {
    const children = new Map<number, number[]>();
    for (const entry of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(entry))
            continue;
        try {
            const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
            // The parent pid is the 2nd field after the parenthesised command name.
            const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
            children.set(parent, [...children.get(parent) ?? [], Number(entry)]);
        } catch {
            // The process ended while we looked.
        }
    }
    const found: number[] = [];
    const visit = (parent: number) => {
        for (const child of children.get(parent) ?? []) {
            found.push(child);
            visit(child);
        }
    };
    visit(pid);
    return found;
}

const alive = (pid: number) => {
    try {
        process.kill(pid, 0);
        return true;
    } catch {
        return false;
    }
};

/** Whether something accepts connections on the port. */
const listening = (port: number) => new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
        socket.destroy();
        resolve(true);
    });
    socket.once("error", () => resolve(false));
});

let dir: string;
beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-npm-start-"));
    fs.writeFileSync(path.join(dir, "models.json"), JSON.stringify({models: [{id: "tiny", task: "chat", path: tinyChatModelPath, contextSize: 256}]}));
});
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

/** `npm start -- --models ... --port 0`, exactly as a user types it; resolves once the server says it is ready. */
async function npmStart() {
    const npm = spawn("npm", ["start", "--", "--models", path.join(dir, "models.json"), "--port", "0"], {
        cwd: projectRoot,
        env: {...process.env, LOG_LEVEL: "info", API_KEYS: "", HOST: "", PORT: "", GPU: "off", GLIBC_TUNABLES: undefined},
        stdio: ["ignore", "pipe", "pipe"]
    });
    let output = "";
    npm.stdout!.on("data", (data) => output += data);
    npm.stderr!.on("data", (data) => output += data);
    const exited = new Promise<number | null>((resolve) => npm.on("exit", (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
        npm.stdout!.on("data", () => {
            const match = /listening on (http:\/\/\S+)\/v1/.exec(output);
            if (match != null && output.includes("Ready."))
                resolve(match[1]);
        });
        void exited.then((code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
    });
    const port = Number(new URL(url).port);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    return {npm, url, port, exited, output: () => output, processes: descendantsOf(npm.pid!)};
}

describe("npm start", () => {
    it("runs the compiled server with node, and SIGTERM to npm's process stops it gracefully: port released, no process left", async () => {
        const started = await npmStart();
        // npm -> node (the script is `exec node dist/src/main.js`): no tsx, no shell left in between.
        const commands = started.processes.map((pid) => fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" "));
        expect(commands.some((command) => command.includes("dist/src/main.js"))).toBe(true);
        expect(commands.some((command) => command.includes("tsx"))).toBe(false);
        // glibc's huge-pages tunable, set by the script when the caller has not (docs/performance.md "Huge pages").
        const server = started.processes.find((pid) => fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("dist/src/main.js"))!;
        expect(fs.readFileSync(`/proc/${server}/environ`, "utf8").split("\0")).toContain("GLIBC_TUNABLES=glibc.malloc.hugetlb=1");

        started.npm.kill("SIGTERM");
        await started.exited;
        expect(started.output()).toContain("SIGTERM: shutting down");
        expect(await eventually(() => started.processes.every((pid) => !alive(pid)))).toBe(true);
        expect(await listening(started.port)).toBe(false);
    }, 180_000);

    it("stops the server too when npm itself is killed (SIGKILL: npm cannot forward anything)", async () => {
        const started = await npmStart();
        started.npm.kill("SIGKILL");
        await started.exited;
        expect(await eventually(() => started.processes.every((pid) => !alive(pid)))).toBe(true);
        expect(await listening(started.port)).toBe(false);
    }, 180_000);
});
