import path from "node:path";
import { parseArgs } from "node:util";
import { readSettings } from "../settings/readSettings.js";
import { serverSettings } from "../settings/serverSettings.js";
import { readApiKeyFile, writeApiKeyFile } from "./ApiKeyFile.js";
import { generateApiKey, hashApiKey } from "./keyHash.js";

/** Each call receives complete text, newlines included. */
export type KeysCliIo = {
    stdout: (text: string) => void;
    stderr: (text: string) => void;
};

const usage = `usage: npm run keys -- [--file <path>] <command>

commands:
  add <name>      create a key and print it once (name: 1-64 of A-Z a-z 0-9 . _ -)
                  --admin: an administrator's key, which may also load, unload and pull
                  models (the management API); other keys are users' (they may read the list)
  list            show key names, creation dates and roles
  revoke <name>   delete a key; a running server rejects it within about a second

Revoking the last key locks the server: every /v1 request gets a 401 until a key is added
(a running server picks it up within about a second). To run without keys again (loopback
only), delete the keys file and restart the server.

--file defaults to $API_KEYS_FILE, else ./api-keys.json, as for the server.
`;

const namePattern = /^[A-Za-z0-9._-]{1,64}$/;

class UsageError extends Error {}

/** The logic behind scripts/keys.ts, separate so tests need not spawn a process. Returns the exit code. */
export async function runKeysCli(argv: string[], io: KeysCliIo): Promise<number> {
    try {
        const { command, name, file, admin } = parse(argv);
        if (command === "help") {
            io.stdout(usage);
            return 0;
        }
        if (command === "add")
            add(file, name, admin, io);
        else if (command === "list")
            list(file, io);
        else
            revoke(file, name, io);
        return 0;
    } catch (error) {
        if (error instanceof UsageError) {
            io.stderr(`error: ${error.message}\n\n${usage}`);
            return 2;
        }
        io.stderr(`error: ${(error as Error).message}\n`);
        return 1;
    }
}

function parse(argv: string[]): { command: "help" | "add" | "list" | "revoke", name: string, file: string, admin: boolean } {
    let parsed;
    try {
        parsed = parseArgs({
            args: argv,
            allowPositionals: true,
            strict: true,
            options: {
                file: { type: "string" },
                admin: { type: "boolean" },
                help: { type: "boolean", short: "h" }
            }
        });
    } catch (error) {
        throw new UsageError((error as Error).message);
    }
    const { values, positionals } = parsed;
    const [command, ...rest] = positionals;
    if (values.help || command === "help")
        return { command: "help", name: "", file: "", admin: false };

    if (command !== "add" && command !== "list" && command !== "revoke")
        throw new UsageError(command === undefined ? "missing command" : `unknown command "${command}"`);
    if (rest.length !== (command === "list" ? 0 : 1))
        throw new UsageError(command === "list" ? "list takes no arguments" : `${command} takes exactly one key name`);
    if (values.admin && command !== "add")
        throw new UsageError("--admin goes with add");

    // Resolved lazily, and only API_KEYS_FILE is read: the server's other settings need not be right for the keys CLI.
    const file = values.file != null ? path.resolve(values.file) : readSettings({apiKeysFile: serverSettings.apiKeysFile}, {}, process.env).apiKeysFile;
    return { command, name: rest[0] ?? "", file, admin: values.admin === true };
}

function add(file: string, name: string, admin: boolean, io: KeysCliIo) {
    if (!namePattern.test(name))
        throw new Error(`invalid key name "${name}": use 1-64 characters from A-Z a-z 0-9 . _ -`);
    const data = readApiKeyFile(file);
    if (data.keys.some((key) => key.name === name))
        throw new Error(`a key named "${name}" already exists in ${file}; revoke it first or pick another name`);

    const key = generateApiKey();
    const first = data.keys.length === 0;
    writeApiKeyFile(file, { keys: [...data.keys, { name, hash: hashApiKey(key), created: new Date().toISOString(), ...(admin ? { role: "admin" as const } : {}) }] });
    io.stdout(
        `Created ${admin ? "administrator" : "API"} key "${name}" in ${file}:\n\n` +
        `${key}\n\n` +
        "Save this key now: only its hash is stored, so it cannot be shown again.\n" +
        (first ? "This is the only key: a running server that had none now requires a key on every /v1 request, within about a second.\n" : "")
    );
}

function list(file: string, io: KeysCliIo) {
    const { keys } = readApiKeyFile(file);
    if (keys.length === 0) {
        io.stdout("no keys\n");
        return;
    }
    const width = Math.max(...keys.map((key) => key.name.length));
    io.stdout(keys.map((key) => `${key.name.padEnd(width)}  ${key.created}  ${key.role ?? "user"}\n`).join(""));
}

function revoke(file: string, name: string, io: KeysCliIo) {
    const data = readApiKeyFile(file);
    const keys = data.keys.filter((key) => key.name !== name);
    if (keys.length === data.keys.length)
        throw new Error(`no key named "${name}" in ${file}`);
    writeApiKeyFile(file, { keys });
    io.stdout(`Revoked API key "${name}". A running server stops accepting it within about a second.\n` + (keys.length > 0 ? "" :
        "That was the last key: the server is now locked, every /v1 request gets a 401, until you add a key with " +
        "`npm run keys -- add <name>`. To run without keys instead (loopback only), delete " + file + " and restart the server.\n"));
}
