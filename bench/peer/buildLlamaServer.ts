import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/**
 * llama.cpp's own server, built once from the very source node-llama-cpp ships (its git bundle,
 * release tag in llama.cpp.info.json) into `cacheDir/<tag>-<commit>/`, offline. Returns the binary.
 */
export function buildLlamaServer(projectRoot: string, cacheDir: string, log: (line: string) => void = console.log): string {
    const llamaDir = path.join(projectRoot, "node_modules", "node-llama-cpp", "llama");
    const bundle = path.join(llamaDir, "gitRelease.bundle");
    const {tag} = JSON.parse(fs.readFileSync(path.join(llamaDir, "llama.cpp.info.json"), "utf8")) as {tag: string};
    const head = run("git", ["bundle", "list-heads", bundle]).split(/\s+/)[0].slice(0, 10);
    const sourceDir = path.join(cacheDir, `llama.cpp-${tag}-${head}`);
    const binary = path.join(sourceDir, "build", "bin", "llama-server");
    if (fs.existsSync(binary))
        return binary;
    for (const tool of ["git", "cmake", "c++"])
        if (spawnSync(tool, ["--version"]).status !== 0)
            throw new Error(`bench:peer builds llama-server from source and needs ${tool}, which is not installed`);
    if (!fs.existsSync(path.join(sourceDir, "CMakeLists.txt"))) {
        fs.mkdirSync(cacheDir, {recursive: true});
        fs.rmSync(sourceDir, {recursive: true, force: true});
        log(`Cloning llama.cpp ${tag} from node-llama-cpp's bundle into ${sourceDir}`);
        run("git", ["clone", "--quiet", bundle, sourceDir]);
    }
    log("Building llama-server (once; a few minutes on 2 cores)...");
    run("cmake", ["-S", sourceDir, "-B", path.join(sourceDir, "build"), "-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_CURL=OFF",
        "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF"], true);
    run("cmake", ["--build", path.join(sourceDir, "build"), "-j2", "--target", "llama-server"], true);
    if (!fs.existsSync(binary))
        throw new Error(`The build finished but ${binary} is not there`);
    return binary;
}

function run(command: string, args: string[], inherit = false): string {
    const result = spawnSync(command, args, {encoding: "utf8", stdio: inherit ? "inherit" : "pipe"});
    if (result.status !== 0)
        throw new Error(`${command} ${args.join(" ")} failed (${result.status}): ${result.stderr ?? ""}`);
    return result.stdout ?? "";
}
