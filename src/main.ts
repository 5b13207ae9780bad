import { ConfigError, loadHubConfig, loadStartOptions } from "./config.js";
import { DownloadError } from "./download/DownloadError.js";
import { ensureModels } from "./download/ensureModels.js";
import { createLogger } from "./logger.js";
import { ManifestError } from "./registry/ManifestError.js";
import { StartupError, startServer } from "./startServer.js";
import { serverVersion } from "./version.js";

/** `npm start`: configuration problems end the process with a message and exit code 1, never a stack trace. */
async function main() {
    let config, download;
    try {
        ({config, download} = loadStartOptions());
    } catch (error) {
        return fail(error);
    }
    const logger = createLogger(config.logLevel);

    // First run: no models yet means "here is how to get them", or with --download, getting them.
    try {
        const ready = await ensureModels({
            modelsConfig: config.modelsConfig, download, hub: () => loadHubConfig(), out: process.stdout,
            error: (text) => console.error(text)
        });
        if (!ready) {
            process.exitCode = 1;
            return;
        }
    } catch (error) {
        return fail(error);
    }

    let server;
    try {
        server = await startServer(config, logger);
    } catch (error) {
        return fail(error);
    }

    let stopping = false;
    const stop = (signal: string) => {
        if (stopping) {
            logger.warn(`${signal} again: exiting now`);
            process.exit(1);
        }
        stopping = true;
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

    const auth = server.keys.enabled ? "on" : "off (no API key configured; listening on loopback only)";
    console.log(`local-openai-server ${serverVersion} listening on ${server.url}/v1 (auth ${auth})`);
    try {
        await server.ready;
    } catch (error) {
        logger.error(`Could not load the models: ${(error as Error).message}`);
        await server.close();
        process.exit(1);
    }
    for (const entry of server.registry.entries.filter((model) => server.engines.serves(model))) {
        const aliases = server.registry.aliasesOf(entry);
        console.log(`  ${entry.id} (${entry.task})${aliases.length > 0 ? ` aka ${aliases.join(", ")}` : ""}`);
    }
    console.log("Ready.");
}

function fail(error: unknown) {
    const known = error instanceof ConfigError || error instanceof ManifestError || error instanceof StartupError || error instanceof DownloadError
        || (error as NodeJS.ErrnoException)?.code === "EADDRINUSE";
    console.error(`error: ${known ? (error as Error).message : (error as Error)?.stack ?? String(error)}`);
    process.exitCode = 1;
}

await main();
