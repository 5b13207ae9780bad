// Runs before `npm start`, `npm run download-models` and `npm run keys`: compiles src/ and scripts/
// into dist/ with tsc when dist/ is missing or older than any source file, so those commands run the
// compiled server with plain `node` (which then receives SIGTERM/SIGINT itself) and never stale code.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const stamp = path.join(root, "dist", ".build-stamp");

function newestSource(folder) {
    let newest = 0;
    for (const entry of fs.readdirSync(folder, {withFileTypes: true})) {
        const full = path.join(folder, entry.name);
        if (entry.isDirectory())
            newest = Math.max(newest, newestSource(full));
        else if (/\.(ts|mts|json)$/.test(entry.name))
            newest = Math.max(newest, fs.statSync(full).mtimeMs);
    }
    return newest;
}

const sources = Math.max(newestSource(path.join(root, "src")), newestSource(path.join(root, "scripts")),
    ...["tsconfig.json", "tsconfig.build.json", "package.json"].map((file) => fs.statSync(path.join(root, file)).mtimeMs));
const built = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
if (built < sources || process.argv.includes("--force")) {
    process.stderr.write("Compiling the server (tsc -p tsconfig.build.json)...\n");
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    const result = spawnSync(process.execPath, [tsc, "-p", path.join(root, "tsconfig.build.json")], {stdio: "inherit"});
    if (result.status !== 0) {
        process.stderr.write("error: the build failed (see above).\n");
        process.exit(result.status ?? 1);
    }
    fs.writeFileSync(stamp, new Date().toISOString() + "\n");
}
