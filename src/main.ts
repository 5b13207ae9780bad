import { ConfigError, loadConfig } from "./config.js";
import { createLogger } from "./logger.js";
import { ManifestError } from "./registry/ManifestError.js";
import { StartupError, startServer } from "./startServer.js";
import { serverVersion } from "./version.js";

/** `npm start`: configuration problems end the process with a message and exit code 1, never a stack trace. */
async function main() {
    let config;
    try {
        config = loadConfig();
    } catch (error) {
        return fail(error);
    }
    const logger = createLogger(config.logLevel);

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
    const known = error instanceof ConfigError || error instanceof ManifestError || error instanceof StartupError
        || (error as NodeJS.ErrnoException)?.code === "EADDRINUSE";
    console.error(`error: ${known ? (error as Error).message : (error as Error)?.stack ?? String(error)}`);
    process.exitCode = 1;
}

await main();
