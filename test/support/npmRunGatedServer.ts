import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { eventually } from "./eventually.js";

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * `npm run test:gated-server -- --models <manifest> --port 0 --workers 1`: the `exec node` script `npm start` runs,
 * plus the test-only gate of gatedServerMain.ts, in a process group of its own as a terminal runs it (so a test can
 * signal npm, node or the whole group). Resolves once the server says it is ready; `killGroup()` ends whatever of
 * the group is left (SIGKILL), for a test's `finally`.
 */
export async function npmRunGatedServer(manifest: string, env: Record<string, string> = {}) {
    const npm = spawn("npm", ["run", "test:gated-server", "--", "--models", manifest, "--port", "0", "--workers", "1"], {
        cwd: projectRoot, detached: true,
        env: {...process.env, LOG_LEVEL: "info", API_KEYS: "", HOST: "", PORT: "", GPU: "off", PRELOAD_ALL: "true", ...env},
        stdio: ["ignore", "pipe", "pipe"]
    });
    let output = "";
    npm.stdout!.on("data", (data) => output += data);
    npm.stderr!.on("data", (data) => output += data);
    const exited = new Promise<number | null>((resolve) => npm.on("exit", (code) => resolve(code)));
    const killGroup = () => {
        try {
            process.kill(-npm.pid!, "SIGKILL");
        } catch {
            // already gone
        }
    };
    if (!await eventually(() => output.includes("Ready."), 6000)) {
        killGroup();
        throw new Error(`npm run test:gated-server did not get ready:\n${output}`);
    }
    const url = /listening on (http:\/\/\S+)\/v1/.exec(output)![1];
    return {npm, url, exited, output: () => output, killGroup};
}
