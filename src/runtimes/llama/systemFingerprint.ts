import crypto from "node:crypto";
import fs from "node:fs";

const sampleBytes = 1 << 20;
/** Model files whose identity is remembered (the least recently used forgotten first). */
const rememberedFiles = 64;
/** modelFileIdentity's hashes by path, size and modification time: a model loaded again (the library's swaps) reads nothing. */
const identities = new Map<string, Buffer>();

export type FingerprintInputs = {
    serverVersion: string;
    nodeLlamaCppVersion: string;
    llamaCppRelease: string;
    backend: string;
    /** describeLlamaBinary: native or prebuilt, and the CPU variant. */
    binary: string;
    modelPath: string;
    contextSize: number;
    threads: number;
    /** Flash attention changes the order of the attention sums, hence the last bits of the logits. */
    flashAttention: boolean | "auto";
};

/**
 * `system_fingerprint`: changes whenever something that can change outputs for a fixed seed
 * changes (server or llama.cpp build and binary, backend, model file, context size, threads, flash
 * attention), and stays the
 * same across restarts otherwise. The model file is identified by its size and its first and
 * last MiB rather than a full hash, which would take seconds on multi-GB files at every start;
 * its path and modification time are left out so a copied folder keeps its fingerprint.
 */
export function systemFingerprint(inputs: FingerprintInputs): string {
    const hash = crypto.createHash("sha256");
    hash.update(JSON.stringify({...inputs, modelPath: undefined}));
    hash.update(modelFileIdentity(inputs.modelPath));
    return "fp_" + hash.digest("hex").slice(0, 12);
}

function modelFileIdentity(filePath: string) {
    const stat = fs.statSync(filePath);
    const key = JSON.stringify([filePath, stat.size, stat.mtimeMs]);
    const known = identities.get(key) ?? readFileIdentity(filePath);
    identities.delete(key);
    identities.set(key, known);
    if (identities.size > rememberedFiles)
        identities.delete(identities.keys().next().value!);
    return known;
}

function readFileIdentity(filePath: string) {
    const fd = fs.openSync(filePath, "r");
    try {
        const size = fs.fstatSync(fd).size;
        const hash = crypto.createHash("sha256").update(String(size));
        const buffer = Buffer.alloc(Math.min(sampleBytes, size));
        fs.readSync(fd, buffer, 0, buffer.length, 0);
        hash.update(buffer);
        fs.readSync(fd, buffer, 0, buffer.length, Math.max(0, size - buffer.length));
        hash.update(buffer);
        return hash.digest();
    } finally {
        fs.closeSync(fd);
    }
}
