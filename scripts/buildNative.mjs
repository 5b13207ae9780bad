// `npm run build:native`: compiles llama.cpp for this machine's CPU from the source node-llama-cpp
// ships (a git bundle in node_modules/node-llama-cpp/llama, so no network is needed), with
// node-llama-cpp's own build command. The server then loads it (see src/runtimes/llama/llamaRuntime.ts;
// LLAMA_BUILD=prebuilt goes back to the prebuilt binaries). Takes ~3+ minutes on 2 cores.
// The build lives in node_modules/node-llama-cpp/llama/localBuilds: `npm ci` removes it.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// node-llama-cpp does not export its package.json, so it is found where npm installs it.
const packageDir = path.join(projectRoot, "node_modules", "node-llama-cpp");
const bundle = path.join(packageDir, "llama", "gitRelease.bundle");

/** The first of `commands` that runs with `args`, or null. */
function findTool(commands, args = ["--version"]) {
    for (const command of commands) {
        const result = spawnSync(command, args, {encoding: "utf8"});
        if (result.status === 0)
            return {command, version: (result.stdout || result.stderr).split("\n")[0].trim()};
    }
    return null;
}

const missing = [];
const cmake = findTool(["cmake"]);
if (cmake == null)
    missing.push("cmake (3.19 or newer), e.g. `apt-get install cmake`");
const compiler = findTool([process.env.CXX, "c++", "g++", "clang++"].filter(Boolean));
if (compiler == null)
    missing.push("a C++17 compiler, e.g. `apt-get install g++` (or set CXX)");
const git = findTool(["git"]);
if (git == null)
    missing.push("git (the source is unpacked from a git bundle), e.g. `apt-get install git`");
if (!fs.existsSync(bundle))
    missing.push(`node-llama-cpp's bundled llama.cpp source (${bundle}); reinstall node-llama-cpp`);
if (missing.length > 0) {
    console.error("Cannot build llama.cpp here. Missing:\n" + missing.map((item) => `  - ${item}`).join("\n") +
        "\nThe server keeps using node-llama-cpp's prebuilt binaries meanwhile.");
    process.exit(1);
}
console.log(`Building llama.cpp for this CPU with ${cmake.version}, ${compiler.version} (${compiler.command}) from the bundled source...`);

const cli = path.join(packageDir, "dist", "cli", "cli.js");
const started = Date.now();
const result = spawnSync(process.execPath, [cli, "source", "download", "--gpu", "false", "--noUsageExample"], {
    stdio: "inherit",
    env: {...process.env, NODE_LLAMA_CPP_SKIP_DOWNLOAD: "false"}
});
if (result.status !== 0) {
    console.error(`The build failed (exit code ${result.status}); the server keeps using the prebuilt binaries.`);
    process.exit(result.status ?? 1);
}
console.log(`Native llama.cpp built in ${Math.round((Date.now() - started) / 1000)} s. The server uses it from its next start ` +
    "(GET /health names the binary under models.<id>.details.binary; LLAMA_BUILD=prebuilt switches back).");
