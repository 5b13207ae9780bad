import { ConfigError, loadHubConfig, loadStartOptions } from "./config.js";
import { DownloadError } from "./download/DownloadError.js";
import { ensureModels } from "./download/ensureModels.js";
import { createLogger } from "./logger.js";
import { ManifestError } from "./core/registry/ManifestError.js";
import type { Capability } from "./capabilities/Capability.js";
import { StartupError, startServer } from "./startServer.js";
import { usageText } from "./usageText.js";
import { demoModelPath } from "./demoModelPath.js";
import { serverVersion } from "./version.js";

/**
 * `npm start` (src/main.ts): configuration problems end the process with a message and exit code 1,
 * never a stack trace. `capabilities` replaces the built-in list (tests add test-only ones).
 */
export async function runServerCommand(options: {capabilities?: readonly Capability[]} = {}) {
    if (process.argv.slice(2).some((arg) => arg === "--help" || arg === "-h")) {
        process.stdout.write(usageText);
        return;
    }
    let config, download, allowUnverified, warnings;
    try {
        ({config, download, allowUnverified, warnings} = loadStartOptions());
    } catch (error) {
        return fail(error);
    }
    const logger = createLogger(config.logLevel);
    for (const warning of warnings)
        logger.warn(warning);

    // First run: no models yet means "here is how to get them" and the demo model, or with --download, getting them.
    try {
        const plan = config.modelPaths.length > 0 ? "serve" : await ensureModels({
            modelsConfig: config.modelsConfig, download, allowUnverified, hub: () => loadHubConfig(), out: process.stdout,
            error: (text) => console.error(text)
        });
        if (plan === "demo")
            config = {...config, modelPaths: [demoModelPath]};
    } catch (error) {
        return fail(error);
    }

    let server;
    try {
        server = await startServer(config, logger, {capabilities: options.capabilities});
    } catch (error) {
        return fail(error);
    }

    // A terminal's Ctrl-C (and systemd's stop) signals the whole process group: npm and node each get
    // the signal, and npm forwards it once more. Copies within a second are that one request; only a
    // signal a second or more after the first means "stop now".
    let stoppingSince: number | null = null;
    const stop = (signal: string) => {
        if (stoppingSince != null) {
            if (performance.now() - stoppingSince < repeatedSignalMs) {
                logger.info(`${signal} again within a second (the terminal and npm both deliver it): still finishing in-flight requests`);
                return;
            }
            logger.warn(`${signal} again: exiting now`);
            process.exit(1);
        }
        stoppingSince = performance.now();
        logger.info(`${signal}: shutting down (finishing in-flight requests)`);
        server.close().then(() => process.exit(0), (error) => {
            logger.error("Shutdown failed", {error: String(error)});
            process.exit(1);
        });
    };
    // A last line of defence: an unexpected rejection is logged, it does not take every other request down with it.
    process.on("unhandledRejection", (reason) => logger.error("Unhandled rejection", {error: (reason as Error)?.stack ?? String(reason)}));
    process.on("SIGINT", () => stop("SIGINT"));
    process.on("SIGTERM", () => stop("SIGTERM"));
    stopWhenOrphaned(() => stop("npm exited"));

    const auth = {
        on: "auth on",
        open: "auth off: no API key configured, so only this machine may call it",
        locked: `auth on but LOCKED: ${server.keys.keysFile} holds no key, so every /v1 request gets a 401 until one is added with \`npm run keys -- add <name>\``
    }[server.keys.state];
    console.log(`local-openai-server ${serverVersion} listening on ${server.url}/v1, ${auth}`);
    // Preloaded models (manifest `preload`, --preload-all) are loaded first; one that fails is logged by the
    // library and answers its requests with the reason, while the others serve.
    await server.ready.catch(() => {});
    for (const entry of server.registry.entries) {
        const aliases = server.registry.aliasesOf(entry);
        console.log(`  ${entry.id} (${entry.task})${aliases.length > 0 ? ` aka ${aliases.join(", ")}` : ""}`);
    }
    // "Ready." when /health/ready says so. A preloaded model that failed keeps it at 503 and is tried again by itself:
    // then the line says so, and "Ready." follows once the retry has loaded it. Nothing while shutting down.
    if (stoppingSince != null)
        return;
    if (server.engines.state === "ready") {
        console.log("Ready.");
        return;
    }
    console.log("Serving, but not ready: a preloaded model failed to load (the error above); /health/ready answers 503 until it loads.");
    let said = false;
    server.engines.onLoad(() => {
        if (!said && stoppingSince == null && server.engines.state === "ready") {
            said = true;
            console.log("Ready.");
        }
    });
}

/** Signals this soon after the first are copies of it (process group and npm's forwarding), not a second Ctrl-C. */
const repeatedSignalMs = 1000;

/**
 * `npm start` runs `exec node dist/src/main.js`, so npm's forwarded SIGTERM reaches this process
 * directly. Where npm cannot forward it (npm killed with SIGKILL, a shell that does not exec), the
 * server would be left running without its parent: when started by npm and npm is gone, stop too.
 */
function stopWhenOrphaned(stop: () => void) {
    if (process.env.npm_lifecycle_event == null)
        return;
    const parent = process.ppid;
    const watch = setInterval(() => {
        if (process.ppid !== parent) {
            clearInterval(watch);
            stop();
        }
    }, 500);
    watch.unref();
}

function fail(error: unknown) {
    const known = error instanceof ConfigError || error instanceof ManifestError || error instanceof StartupError || error instanceof DownloadError
        || (error as NodeJS.ErrnoException)?.code === "EADDRINUSE";
    console.error(`error: ${known ? (error as Error).message : (error as Error)?.stack ?? String(error)}`);
    process.exitCode = 1;
}
