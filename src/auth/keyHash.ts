import { createHash, randomBytes } from "node:crypto";

const keyPrefix = "sk-local-";

/** A new key: 256 random bits, base64url so it survives headers, shells and URLs unescaped. */
export function generateApiKey(): string {
    return keyPrefix + randomBytes(32).toString("base64url");
}

/**
 * A plain, unsalted SHA-256 is enough here: our keys carry 256 bits of randomness, so neither
 * brute force nor precomputed tables can invert the hash, and a slow password hash (scrypt,
 * argon2) would only add CPU cost to every request. Keys chosen by people (env API_KEYS) are
 * never written to disk, so their weaker entropy does not matter for this format.
 */
export function hashApiKey(key: string): string {
    return "sha256:" + createHash("sha256").update(key, "utf8").digest("hex");
}
