import fs from "node:fs";
import { timingSafeEqual } from "node:crypto";
import { readApiKeyFile } from "./ApiKeyFile.js";
import { hashApiKey } from "./keyHash.js";

export type ApiKeyStoreOptions = {
    /** Keys from env API_KEYS, named `env:1`, `env:2`, ... in order. */
    plainKeys: string[];
    /** Hashed keys managed by `npm run keys`; may not exist yet. */
    keysFile: string;
    /** How often verify() may look at the keys file for changes. Default 1000. */
    reloadIntervalMs?: number;
    /** Called when a changed keys file cannot be used; the previous keys stay in force. */
    onWarning?: (message: string) => void;
};

type StoredKey = {
    name: string;
    digest: Buffer;
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
    #fileKeys: StoredKey[];
    #fileSignature: string;
    #lastCheck: number;
    #everEnabled: boolean;

    /** Throws if the keys file exists but cannot be read or is malformed: better not to start than to start with the wrong keys. */
    constructor(options: ApiKeyStoreOptions) {
        this.#envKeys = options.plainKeys.map((key, index) => ({ name: `env:${index + 1}`, digest: digestOf(key) }));
        this.#keysFile = options.keysFile;
        this.#reloadIntervalMs = options.reloadIntervalMs ?? 1000;
        this.#onWarning = options.onWarning ?? (() => {});
        // Stat before reading: if the file changes in between, the next check sees a new signature and reloads.
        this.#fileSignature = signatureOf(this.#keysFile);
        this.#fileKeys = loadFileKeys(this.#keysFile);
        this.#lastCheck = performance.now();
        this.#everEnabled = this.#hasKeys();
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

    /** The matching key's name, or null. Never throws. */
    verify(presentedKey: string): { name: string } | null {
        this.#reloadIfChanged();
        const presented = digestOf(presentedKey);
        let match: StoredKey | null = null;
        // Compare against every key, without stopping at a match, so timing does not reveal which key (or whether an early one) matched.
        for (const key of [...this.#envKeys, ...this.#fileKeys]) {
            const equal = timingSafeEqual(presented, key.digest);
            if (equal && match === null)
                match = key;
        }
        return match === null ? null : { name: match.name };
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
            this.#fileKeys = loadFileKeys(this.#keysFile);
            this.#everEnabled ||= this.#hasKeys();
        } catch (error) {
            this.#onWarning(`${(error as Error).message}; keeping the previously loaded API keys`);
        }
    }
}

/** Hashing first gives every key, whatever its length, the same 71-byte form that timingSafeEqual needs. */
function digestOf(key: string) {
    return Buffer.from(hashApiKey(key), "ascii");
}

function loadFileKeys(file: string): StoredKey[] {
    return readApiKeyFile(file).keys.map(({ name, hash }) => ({ name, digest: Buffer.from(hash, "ascii") }));
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
