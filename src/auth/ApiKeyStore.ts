import fs from "node:fs";
import { timingSafeEqual } from "node:crypto";
import { readApiKeyFile, type ApiKeyRole } from "./ApiKeyFile.js";
import { hashApiKey } from "./keyHash.js";

export type ApiKeyStoreOptions = {
    /** Keys from env API_KEYS, named `env:1`, `env:2`, ... in order; users (an administrator's key is made with `npm run keys -- add <name> --admin`). */
    plainKeys: string[];
    /** Hashed keys managed by `npm run keys`; may not exist yet. */
    keysFile: string;
    /** How often verify() may look at the keys file for changes. Default 1000. */
    reloadIntervalMs?: number;
    /** Called when a changed keys file cannot be used; the previous keys stay in force. */
    onWarning?: (message: string) => void;
    /** Called when auth changes while running: turned on by a first key, locked by revoking the last one, unlocked again. */
    onNotice?: (message: string) => void;
};

/**
 * - `open`: no key was ever configured (no keys file, no API_KEYS): requests need no key.
 * - `on`: keys exist; requests need one of them.
 * - `locked`: keys were in use and none is left (the last one was revoked, or the keys file is
 *   empty at startup): every request is refused until a key is added. Running open again is a
 *   deliberate act: delete the keys file and restart.
 */
export type AuthState = "open" | "on" | "locked";

type StoredKey = {
    name: string;
    digest: Buffer;
    role: ApiKeyRole;
};

/**
 * Checks presented API keys against env keys and the keys file.
 *
 * Revocation works without a restart: verify() stats the keys file at most once per
 * reloadIntervalMs and re-reads it when its mtime, ctime, size or inode changed (the inode
 * catches an atomic rename that keeps the size within one mtime tick). A lazy statSync was
 * chosen over fs.watchFile/fs.watch: it needs no timer to unref or close, fs.watch loses track
 * of a file replaced by rename, and an idle server does no work at all. The cost is one stat
 * per interval on the request path, which is negligible.
 */
export class ApiKeyStore {
    readonly #envKeys: StoredKey[];
    readonly #keysFile: string;
    readonly #reloadIntervalMs: number;
    readonly #onWarning: (message: string) => void;
    readonly #onNotice: (message: string) => void;
    #fileKeys: StoredKey[];
    #fileSignature: string;
    #lastCheck: number;
    #everEnabled: boolean;

    /** Throws if the keys file exists but cannot be read or is malformed: better not to start than to start with the wrong keys. */
    constructor(options: ApiKeyStoreOptions) {
        this.#envKeys = options.plainKeys.map((key, index) => ({ name: `env:${index + 1}`, digest: digestOf(key), role: "user" as const }));
        this.#keysFile = options.keysFile;
        this.#reloadIntervalMs = options.reloadIntervalMs ?? 1000;
        this.#onWarning = options.onWarning ?? (() => {});
        this.#onNotice = options.onNotice ?? (() => {});
        // Stat before reading: if the file changes in between, the next check sees a new signature and reloads.
        this.#fileSignature = signatureOf(this.#keysFile);
        this.#fileKeys = loadFileKeys(this.#keysFile);
        this.#lastCheck = performance.now();
        // A keys file that exists but holds no key is what revoking the last key leaves behind: locked, not open.
        this.#everEnabled = this.#hasKeys() || this.#fileSignature !== "missing";
    }

    /**
     * Whether requests must carry a key. It turns on once a key appears (the file may gain its
     * first key while the server runs) and then stays on: revoking the last key must lock
     * everyone out, not silently open the server.
     */
    get enabled(): boolean {
        this.#reloadIfChanged();
        return this.#everEnabled;
    }

    get state(): AuthState {
        this.#reloadIfChanged();
        return !this.#everEnabled ? "open" : this.#hasKeys() ? "on" : "locked";
    }

    /** The keys file, for messages that say where keys go. */
    get keysFile(): string {
        return this.#keysFile;
    }

    /** Looks at the keys file now (subject to the reload interval), so a change is logged when it happens, not at the next request. */
    check(): void {
        this.#reloadIfChanged();
    }

    /**
     * The matching key's name, hash (its identity: names are labels, and a revoked key's name may be given to a
     * new key) and role, or null. Never throws.
     */
    verify(presentedKey: string): { name: string, hash: string, role: ApiKeyRole } | null {
        this.#reloadIfChanged();
        const presented = digestOf(presentedKey);
        let match: StoredKey | null = null;
        // Compare against every key, without stopping at a match, so timing does not reveal which key (or whether an early one) matched.
        for (const key of [...this.#envKeys, ...this.#fileKeys]) {
            const equal = timingSafeEqual(presented, key.digest);
            if (equal && match === null)
                match = key;
        }
        return match === null ? null : { name: match.name, hash: match.digest.toString("ascii"), role: match.role };
    }

    #hasKeys() {
        return this.#envKeys.length > 0 || this.#fileKeys.length > 0;
    }

    #reloadIfChanged() {
        const now = performance.now();
        if (now - this.#lastCheck < this.#reloadIntervalMs)
            return;
        this.#lastCheck = now;
        try {
            const signature = signatureOf(this.#keysFile);
            if (signature === this.#fileSignature)
                return;
            // Remember the signature even if loading fails, so a broken file warns once, not every interval.
            this.#fileSignature = signature;
            const before = this.#everEnabled ? this.#hasKeys() ? "on" : "locked" : "open";
            this.#fileKeys = loadFileKeys(this.#keysFile);
            this.#everEnabled ||= this.#hasKeys();
            const after = this.#everEnabled ? this.#hasKeys() ? "on" : "locked" : "open";
            if (before !== after)
                this.#onNotice(noticeOf(before, after, this.#keysFile));
        } catch (error) {
            this.#onWarning(`${(error as Error).message}; keeping the previously loaded API keys`);
        }
    }
}

function noticeOf(before: AuthState, after: AuthState, keysFile: string) {
    if (after === "locked")
        return `The last API key was revoked: the server is locked, every /v1 request gets a 401, until a key is added ` +
            `with \`npm run keys -- add <name>\`. To run without keys instead, delete ${keysFile} and restart.`;
    return before === "open"
        ? "An API key was added: auth is now on, every /v1 request needs `Authorization: Bearer <key>`."
        : "An API key was added: the server is unlocked.";
}

/** Hashing first gives every key, whatever its length, the same 71-byte form that timingSafeEqual needs. */
function digestOf(key: string) {
    return Buffer.from(hashApiKey(key), "ascii");
}

function loadFileKeys(file: string): StoredKey[] {
    return readApiKeyFile(file).keys.map(({ name, hash, role }) => ({ name, digest: Buffer.from(hash, "ascii"), role: role ?? "user" }));
}

function signatureOf(file: string) {
    let stats: fs.Stats | undefined;
    try {
        stats = fs.statSync(file, { throwIfNoEntry: false });
    } catch (error) {
        throw new Error(`API keys file ${file}: cannot stat it: ${(error as Error).message}`);
    }
    return stats == null ? "missing" : `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}
