import { execFile } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The agent programs the e2e tests run unchanged. They are not devDependencies (a user's `npm ci`
 * must not download agent programs): each installs from the npm registry on its test's first run
 * into the git-ignored `test/.agents/<name>@<version>/`, and later runs reuse that folder.
 */
export const agentPrograms = {
    claudeCode: {package: "@anthropic-ai/claude-code", version: "2.1.332", bin: "claude"},
    codex: {package: "@openai/codex", version: "0.171.0", bin: "codex"}
} as const;

export type AgentProgram = (typeof agentPrograms)[keyof typeof agentPrograms];

/** The installed program's executable, or the one-line reason it could not be installed (the test then skips). */
export async function installAgentProgram(program: AgentProgram): Promise<{bin: string} | {skip: string}> {
    const dir = path.join(projectRoot, "test", ".agents", `${program.package.replace("/", "+")}@${program.version}`);
    const bin = path.join(dir, "node_modules", ".bin", program.bin);
    const manifest = path.join(dir, "node_modules", ...program.package.split("/"), "package.json");
    const installed = () => existsSync(bin) && existsSync(manifest)
        && (JSON.parse(readFileSync(manifest, "utf8")) as {version?: string}).version === program.version;
    if (installed())
        return {bin};
    try {
        rmSync(dir, {recursive: true, force: true});
        await promisify(execFile)("npm", [
            "install", "--prefix", dir, `${program.package}@${program.version}`,
            "--no-audit", "--no-fund", "--no-save", "--loglevel", "error"
        ], {timeout: 300_000, maxBuffer: 16 << 20, env: {...process.env, npm_config_update_notifier: "false"}});
    } catch (error) {
        rmSync(dir, {recursive: true, force: true});
        const first = String((error as {stderr?: string}).stderr ?? error).trim().split("\n").find((line) => line.trim() !== "");
        return {skip: `${program.package}@${program.version} could not be installed from npm (${first ?? "no output"})`};
    }
    return installed() ? {bin} : {skip: `${program.package}@${program.version} installed without its \`${program.bin}\` executable`};
}
