import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export type SpawnedServer = {
    child: ChildProcess;
    url: string;
    output: () => string;
    /** Resolves with the exit code. */
    exited: Promise<number | null>;
    stop(signal?: NodeJS.Signals): Promise<number | null>;
};

/** `npm start`'s entry point; spawned as `npm start` runs it, compiled (dist/src/main.js, built by globalSetup). */
export const serverEntry = "src/main.ts";
/** The compiled entry `npm start` runs: ~1 s of CPU to start here, against ~3 s for the source through tsx (no compile cache in tests). */
const compiledServerEntry = path.join(projectRoot, "dist/src/main.js");
/** The same command with the gate capability added (test/support/capabilities/gateCapability.ts; SIGUSR2 opens the gate). */
export const gatedServerEntry = "test/support/gatedServerMain.ts";

/** Registers tsx and runs a TypeScript entry, keeping process.execArgv empty (see sourceEntry.mjs). */
const sourceEntry = path.join(projectRoot, "test/support/sourceEntry.mjs");

/** Runs `npm start`'s compiled entry point (or the TypeScript `entry`, through tsx) as a real process, as a user would. */
export function runServerProcess(args: string[], env: Record<string, string> = {}, entry = serverEntry) {
    const command = entry === serverEntry ? [compiledServerEntry, ...args] : [sourceEntry, entry, ...args];
    const child = spawn(process.execPath, command, {
        cwd: projectRoot,
        // Models preloaded, as startTestServer does: the tests of a process are about loaded models (PRELOAD_ALL: "" turns it off).
        env: {...process.env, LOG_LEVEL: "warn", API_KEYS: "", HOST: "", PORT: "", GPU: "off", PRELOAD_ALL: "true", ...env},
        stdio: ["ignore", "pipe", "pipe"]
    });
    let output = "";
    child.stdout!.on("data", (data) => output += data);
    child.stderr!.on("data", (data) => output += data);
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    return {child, exited, output: () => output};
}

/**
 * How long a spawned server may take to be ready: about 3 s alone on the 2-core machine, 5-27 s when other test
 * files and helpers load it. A bound, not a measurement: a server that needs longer fails the test with its output.
 */
const readyBoundMs = 45_000;

/** Starts the server process and waits until it is ready (or fails the test with its output). */
export async function spawnServer(args: string[], env: Record<string, string> = {}, entry = serverEntry): Promise<SpawnedServer> {
    const {child, exited, output} = runServerProcess(["--port", "0", ...args], env, entry);
    const url = await new Promise<string>((resolve, reject) => {
        // A bound for a failure, not a wait: it resolves as soon as the server says it is ready. A server that never gets
        // there is killed, so that it does not outlive the test.
        const timer = setTimeout(() => {
            child.kill("SIGKILL");
            reject(new Error(`server did not get ready:\n${output()}`));
        }, readyBoundMs);
        const check = () => {
            const match = /listening on (http:\/\/\S+)\/v1/.exec(output());
            // (A preloaded model that failed: it serves the others, and says it is not ready.)
            if (match != null && /^(Ready\.|Serving, but not ready)/m.test(output())) {
                clearTimeout(timer);
                resolve(match[1]);
            }
        };
        child.stdout!.on("data", check);
        void exited.then((code) => {
            clearTimeout(timer);
            reject(new Error(`server exited with ${code}:\n${output()}`));
        });
    });
    return {
        child, url, output, exited,
        stop: async (signal = "SIGTERM") => {
            if (child.exitCode == null)
                child.kill(signal);
            return exited;
        }
    };
}
