import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { isJsonObject } from "../core/validation/isJsonObject.js";

export type ApiKeyRecord = {
    name: string;
    /** "sha256:" + 64 lowercase hex digits, see hashApiKey. */
    hash: string;
    /** ISO 8601 timestamp. */
    created: string;
    /** `admin` may also manage models (load, unload, pull); absent (every key made before roles) = `user`. */
    role?: ApiKeyRole;
};

/** What a key may do: `user` calls the API and reads the model list; `admin` also manages models. */
export type ApiKeyRole = "user" | "admin";

export type ApiKeyFileData = {
    keys: ApiKeyRecord[];
};

const hashPattern = /^sha256:[0-9a-f]{64}$/;

/**
 * Synchronous on purpose: the file is tiny, and ApiKeyStore re-reads it from inside verify(),
 * where staying synchronous means no request can see a half-applied reload.
 * A missing file means "no keys yet", so a fresh install needs no setup step.
 */
export function readApiKeyFile(file: string): ApiKeyFileData {
    let text: string;
    try {
        text = fs.readFileSync(file, "utf8");
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT")
            return { keys: [] };
        throw new Error(`API keys file ${file}: cannot read it: ${(error as Error).message}`);
    }

    let json: unknown;
    try {
        json = JSON.parse(text);
    } catch (error) {
        throw new Error(`API keys file ${file}: not valid JSON: ${(error as Error).message}`);
    }
    return validate(json, file);
}

/**
 * Atomic so that a server re-reading the file, or a crash mid-write, never sees a truncated
 * file: the data goes to a temp file in the same directory (rename is only atomic within one
 * file system), is fsynced, then renamed over the old one. Mode 0600: the hashes cannot be
 * turned back into keys, but other local users have no reason to read or tamper with the list.
 */
export function writeApiKeyFile(file: string, data: ApiKeyFileData): void {
    const tempFile = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
    const text = JSON.stringify({ keys: data.keys.map(({ name, hash, created, role }) => ({ name, hash, created, ...(role === "admin" ? { role } : {}) })) }, null, 4) + "\n";
    try {
        const fd = fs.openSync(tempFile, "wx", 0o600);
        try {
            fs.writeFileSync(fd, text, "utf8");
            fs.fsyncSync(fd);
        } finally {
            fs.closeSync(fd);
        }
        fs.renameSync(tempFile, file);
    } catch (error) {
        fs.rmSync(tempFile, { force: true });
        throw new Error(`API keys file ${file}: cannot write it: ${(error as Error).message}`);
    }
}

function validate(json: unknown, file: string): ApiKeyFileData {
    const fail = (what: string): never => {
        throw new Error(`API keys file ${file} is malformed: ${what}`);
    };
    if (!isJsonObject(json) || !Array.isArray(json.keys))
        return fail(`expected an object like { "keys": [...] }`);

    const names = new Set<string>();
    const keys = json.keys.map((entry: unknown, index: number): ApiKeyRecord => {
        const at = `keys[${index}]`;
        if (!isJsonObject(entry))
            return fail(`${at} must be an object`);
        const { name, hash, created, role } = entry;
        if (typeof name !== "string" || name === "")
            return fail(`${at}.name must be a non-empty string`);
        // Revocation is by name, so two keys with one name could not be told apart.
        if (names.has(name))
            return fail(`${at}.name "${name}" is used by more than one key`);
        names.add(name);
        if (typeof hash !== "string" || !hashPattern.test(hash))
            return fail(`${at}.hash must be "sha256:" followed by 64 lowercase hex digits`);
        if (typeof created !== "string" || Number.isNaN(Date.parse(created)))
            return fail(`${at}.created must be an ISO date string`);
        if (role !== undefined && role !== "user" && role !== "admin")
            return fail(`${at}.role must be "user" or "admin"`);
        return { name, hash, created, ...(role === "admin" ? { role } : {}) };
    });
    return { keys };
}

