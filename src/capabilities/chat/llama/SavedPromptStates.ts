import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { LlamaContextSequence, Token } from "node-llama-cpp";
import type { Logger } from "../../../logger.js";

/** Where, and how much of, a chat model's prompt cache is kept on disk while the model is unloaded. */
export type PromptStateOptions = {
    /** The server run's folder (made on first use, removed at shutdown). */
    folder: () => Promise<string>;
    /** Bytes of state files kept per model; 0 = nothing is saved. */
    maxBytes: number;
    /** Aborted when the server shuts down: an engine disposed then saves nothing (the run folder goes with it). */
    closing: AbortSignal;
    /** Where a state that could not be saved or restored is told (it costs the cache, never the load or the unload). */
    logger?: Logger;
};

/** A free sequence and what the prefix cache knows of it (SequencePrefixCache.giveBack's `wholeChunkTokens`). */
export type CachedSequenceState = {sequence: LlamaContextSequence, wholeChunkTokens: number};

/** A sequence's draft model sequence (speculative decoding with a draft model: ModelSpeculation.draftSequenceOf), else null. */
export type DraftSequenceOf = (sequence: LlamaContextSequence) => LlamaContextSequence | null;

/** `draftFile`: the state of its draft model's sequence, saved beside it (the draft's own prompt cache). */
type SavedSequence = {file: string, bytes: number, tokens: number, wholeChunkTokens: number, draftFile?: string};
/** `sequences`: most recently used first. */
type SavedIndex = {identity: string, sequences: SavedSequence[]};

const indexName = "index.json";

/**
 * One chat model's prompt cache across an unload: when the model is evicted or idles out, its free
 * sequences' KV state (node-llama-cpp's `saveStateToFile`: the cells of that sequence and its tokens) is
 * written to `<run folder>/prompt-states/<model>/`, most recently used first, until the model's share of
 * bytes is spent (the oldest sequences are the ones dropped); on the model's next load the states go back
 * into its sequences and the files are deleted. A state is restored only into the model it was saved from:
 * same file (size, modification time, first and last MiB: the fingerprint), same context, sequences, batch
 * and runtime (`identity`), as llama.cpp requires; any other is deleted unread. With a draft model, each sequence's
 * draft sequence is saved and restored with it (its draft model's file and context are in `identity` too), so the
 * draft model does not evaluate the conversation again on its first draft.
 */
export class SavedPromptStates {
    constructor(private readonly options: PromptStateOptions, private readonly modelId: string, private readonly identity: string) {}

    get enabled() {
        return this.options.maxBytes > 0;
    }

    /** Saves `sequences` (most recently used first; their draft sequences too) within the model's share of bytes; what was kept. */
    async save(sequences: readonly CachedSequenceState[], draftOf: DraftSequenceOf = () => null): Promise<{sequences: number, bytes: number, tokens: number}> {
        const kept = {sequences: 0, bytes: 0, tokens: 0};
        if (!this.enabled || this.options.closing.aborted)
            return kept;
        const held = sequences.filter(({sequence}) => sequence.contextTokens.length > 0);
        if (held.length === 0)
            return kept;
        const folder = await this.folder();
        await fs.rm(folder, {recursive: true, force: true});
        await fs.mkdir(folder, {recursive: true, mode: 0o700});
        const saved: SavedSequence[] = [];
        try {
            for (const [index, {sequence, wholeChunkTokens}] of held.entries()) {
                if (this.options.closing.aborted)
                    break;
                const file = `sequence-${index}.state`;
                const tokens = sequence.contextTokens.length;
                const bytes = await this.saveOne(sequence, path.join(folder, file));
                if (kept.bytes + bytes > this.options.maxBytes) {
                    await fs.rm(path.join(folder, file), {force: true});
                    break;
                }
                // Its draft sequence, as far as it holds the same conversation (one that did not draft, with penalties, holds an older one).
                const draft = draftOf(sequence);
                let draftFile: string | undefined;
                let draftBytes = 0;
                if (draft != null && await trimToCommonPrefix(draft, sequence.contextTokens) > 0) {
                    draftFile = `sequence-${index}.draft.state`;
                    draftBytes = await this.saveOne(draft, path.join(folder, draftFile));
                    if (kept.bytes + bytes + draftBytes > this.options.maxBytes) {
                        // The share keeps the model's own state first.
                        await fs.rm(path.join(folder, draftFile), {force: true});
                        draftFile = undefined;
                        draftBytes = 0;
                    }
                }
                saved.push({file, bytes: bytes + draftBytes, tokens, wholeChunkTokens, ...(draftFile != null ? {draftFile} : {})});
                kept.sequences++;
                kept.bytes += bytes + draftBytes;
                kept.tokens += tokens;
            }
            await fs.writeFile(path.join(folder, indexName), JSON.stringify({identity: this.identity, sequences: saved} satisfies SavedIndex), {mode: 0o600});
        } catch (error) {
            await fs.rm(folder, {recursive: true, force: true});
            throw error;
        }
        return kept;
    }

    /** `save`, a failure (a full disk, a folder removed meanwhile) logged as one warning: the unload goes on without the cache. */
    async saveOrWarn(sequences: readonly CachedSequenceState[], draftOf?: DraftSequenceOf) {
        try {
            return await this.save(sequences, draftOf);
        } catch (error) {
            this.options.logger?.warn(`The prompt cache of '${this.modelId}' could not be saved: its next load starts cold`, {error: (error as Error).message});
            return null;
        }
    }

    /**
     * Puts the saved states back into `sequences` (free, empty: a model just loaded), the most recently used
     * into the first; returns those restored, oldest first (the order to give them back to the prefix cache).
     * The files are deleted whatever happens: a state is restored once.
     */
    async restore(sequences: readonly LlamaContextSequence[], draftOf: DraftSequenceOf = () => null): Promise<CachedSequenceState[]> {
        if (!this.enabled || this.options.closing.aborted)
            return [];
        // A cache folder that cannot be made (read-only, full) costs the cache, never the load.
        const folder = await this.folder().catch(() => null);
        if (folder == null)
            return [];
        try {
            const index = await readIndex(folder);
            if (index == null || index.identity !== this.identity)
                return [];
            const restored: CachedSequenceState[] = [];
            for (const [position, saved] of index.sequences.slice(0, sequences.length).entries()) {
                const sequence = sequences[position];
                try {
                    await sequence.loadStateFromFile(path.join(folder, saved.file), {acceptRisk: true});
                } catch (error) {
                    // An unreadable state (a disk error, a truncated file): that sequence starts empty.
                    this.options.logger?.warn(`A saved prompt cache of '${this.modelId}' could not be restored: that conversation starts cold`, {error: (error as Error).message});
                    await sequence.clearHistory().catch(() => {});
                    continue;
                }
                const draft = draftOf(sequence);
                if (saved.draftFile != null && draft != null)
                    // A draft state that does not load costs only the draft's own cache (it evaluates the text again).
                    await draft.loadStateFromFile(path.join(folder, saved.draftFile), {acceptRisk: true}).catch(async (error: unknown) => {
                        this.options.logger?.warn(`A saved draft model cache of '${this.modelId}' could not be restored: its drafts start cold`, {error: (error as Error).message});
                        await draft.clearHistory().catch(() => {});
                    });
                restored.push({sequence, wholeChunkTokens: saved.wholeChunkTokens});
            }
            return restored.reverse();
        } finally {
            await fs.rm(folder, {recursive: true, force: true}).catch(() => {});
        }
    }

    /** Writes one sequence's state, readable by its owner only (it holds the conversation; the folder is 0700 too); its bytes. */
    private async saveOne(sequence: LlamaContextSequence, filePath: string): Promise<number> {
        const {fileSize} = await sequence.saveStateToFile(filePath);
        await fs.chmod(filePath, 0o600);
        return fileSize;
    }

    private async folder() {
        const name = crypto.createHash("sha256").update(this.modelId).digest("hex").slice(0, 16);
        return path.join(await this.options.folder(), "prompt-states", name);
    }
}

/** Erases what `draft` holds past its common prefix with `tokens`; the tokens it keeps. */
async function trimToCommonPrefix(draft: LlamaContextSequence, tokens: readonly Token[]): Promise<number> {
    const held = draft.contextTokens;
    let common = 0;
    while (common < held.length && common < tokens.length && held[common] === tokens[common])
        common++;
    if (common < held.length)
        await draft.eraseContextTokenRanges([{start: common, end: held.length}]);
    return common;
}

async function readIndex(folder: string): Promise<SavedIndex | null> {
    try {
        return JSON.parse(await fs.readFile(path.join(folder, indexName), "utf8")) as SavedIndex;
    } catch {
        return null;
    }
}

/** What a saved state must match to be restored: the model file as it is now and the context it was evaluated in. */
export async function promptStateIdentity(inputs: {fingerprint: string, modelPath: string, contextSize: number, sequences: number, batchSize: number,
    draft?: {modelPath: string, contextSize: number} | null}) {
    const stat = await fs.stat(inputs.modelPath);
    const draftStat = inputs.draft == null ? null : await fs.stat(inputs.draft.modelPath);
    return crypto.createHash("sha256").update(JSON.stringify({...inputs, size: stat.size, modified: stat.mtimeMs,
        ...(draftStat == null ? {} : {draftSize: draftStat.size, draftModified: draftStat.mtimeMs})})).digest("hex");
}
