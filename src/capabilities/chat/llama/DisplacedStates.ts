import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { LlamaContextSequence, Token } from "node-llama-cpp";
import type { PromptStateOptions } from "./SavedPromptStates.js";
import { commonPrefixLength } from "./SequencePrefixCache.js";

/** A sequence holding fewer tokens than this past what the next request keeps is not worth a file: evaluating them is quick. */
const minDisplacedTokens = 256;

type Entry = {file: string, tokens: readonly Token[], bytes: number};

/**
 * The prompt cache of conversations pushed out of a model's sequences by other conversations, while the model stays
 * loaded (llama-server's host-memory prompt cache, `--cache-ram`, does the same): when a request takes a sequence
 * whose tokens it does not share (another conversation's), the sequence's state (node-llama-cpp's `saveStateToFile`:
 * its KV cells and tokens) is written to `<run folder>/prompt-states/<model>-displaced/` first; a later request whose
 * prompt shares more with a written state than with any free sequence gets that state loaded back into its sequence
 * and evaluates only what follows. Bounded by the model's share of bytes (`--prompt-cache-disk`), the least recently
 * written dropped first; a state is loaded once (its file is deleted then: the sequence holds it again). Files are
 * removed when the model unloads (its free sequences are saved by SavedPromptStates then) and with the run's folder.
 */
export class DisplacedStates {
    /** Oldest first. */
    private entries: Entry[] = [];
    private bytes = 0;
    /** Whether the folder was ever made. */
    private written = false;
    /** Bytes per token of the last state written (the model's KV shape), to skip one that cannot fit. */
    private bytesPerToken: number | null = null;
    private warned = false;

    constructor(private readonly options: PromptStateOptions, private readonly modelId: string) {}

    /**
     * Before a request's prompt goes into the sequence it took (keeping `kept` of its tokens): what the sequence holds
     * that the prompt does not share (another conversation, at least minDisplacedTokens of it) is written aside first,
     * and a state written aside earlier that shares more of the prompt (by a quarter of minDisplacedTokens at least) is
     * loaded in its place (after `settled`: the copies other requests are making have their data in place). Returns the
     * prompt tokens the sequence keeps then.
     */
    async swap(sequence: LlamaContextSequence, kept: number, prompt: readonly Token[], settled?: () => Promise<void> | undefined): Promise<number> {
        const best = this.best(prompt);
        const restorable = best == null ? 0 : Math.min(best.common, prompt.length - 1);
        if (sequence.contextTokens.length - kept >= minDisplacedTokens)
            await this.keep(sequence, best?.entry);
        if (best == null || restorable - kept < minDisplacedTokens / 4)
            return kept;
        // Loaded, or not (then the sequence holds what it did, or nothing after a failed load): what it holds now decides.
        await this.restoreInto(sequence, best.entry, settled);
        return Math.min(commonPrefixLength(sequence.contextTokens, prompt), prompt.length - 1);
    }

    /**
     * The written state that shares the longest prefix with `prompt`, and how many tokens it shares; null when none
     * shares any.
     */
    private best(prompt: readonly Token[]): {entry: Entry, common: number} | null {
        let best: {entry: Entry, common: number} | null = null;
        for (const entry of this.entries) {
            const common = commonPrefixLength(entry.tokens, prompt);
            if (common > 0 && common > (best?.common ?? 0))
                best = {entry, common};
        }
        return best;
    }

    /**
     * Writes what `sequence` holds, before another conversation takes it; a failure costs only this cache (logged).
     * `protect`: a state about to be loaded, never dropped to make room.
     */
    private async keep(sequence: LlamaContextSequence, protect?: Entry) {
        if (this.options.maxBytes <= 0 || this.options.closing.aborted || sequence.contextTokens.length === 0)
            return;
        const tokens = sequence.contextTokens.slice();
        // A state that cannot fit the share is not written at all (its size from the last one written, per token).
        if (this.bytesPerToken != null && tokens.length * this.bytesPerToken > this.options.maxBytes)
            return;
        // A conversation written before and grown since: the older state is only a prefix of this one.
        for (const entry of this.entries.filter((entry) => entry !== protect && commonPrefixLength(entry.tokens, tokens) === entry.tokens.length))
            await this.drop(entry);
        let file: string | null = null;
        try {
            const folder = await this.folder();
            await fs.mkdir(folder, {recursive: true, mode: 0o700});
            this.written = true;
            file = path.join(folder, `${crypto.randomUUID()}.state`);
            const {fileSize} = await sequence.saveStateToFile(file);
            await fs.chmod(file, 0o600);
            this.bytesPerToken = fileSize / tokens.length;
            this.entries.push({file, tokens, bytes: fileSize});
            this.bytes += fileSize;
            for (const entry of [...this.entries]) {
                if (this.bytes <= this.options.maxBytes)
                    break;
                if (entry !== protect)
                    await this.drop(entry);
            }
        } catch (error) {
            // What a failed write left (a full disk) is not kept.
            if (file != null && !this.entries.some((entry) => entry.file === file))
                await fs.rm(file, {force: true}).catch(() => {});
            // Once: a cache folder that cannot be written fails every time.
            if (!this.warned)
                this.options.logger?.warn(`A displaced conversation of '${this.modelId}' could not be kept: it starts cold when it comes back (told once)`, {error: (error as Error).message});
            this.warned = true;
        }
    }

    /** Loads `entry` into `sequence` (whatever it held is replaced); whether it did (a failure leaves the sequence empty, logged). */
    private async restoreInto(sequence: LlamaContextSequence, entry: Entry, settled?: () => Promise<void> | undefined): Promise<boolean> {
        if (!this.entries.includes(entry))
            return false;
        try {
            // Emptied first: node-llama-cpp forgets the sequence's tokens before the native load, which may fail before
            // it erases the cells (a file gone), and leave cells nobody knows of; and its checkpoints (sliding-window
            // models) belong to the conversation being replaced.
            await sequence.clearHistory();
            // A copy another request made from this sequence (PrefixCopies) moves its data at a decode: before the load
            // writes over it. Emptied, the sequence is no copy's source any more.
            await settled?.();
            // A file that is not the size written (cut short) would stop the process in llama.cpp's reader, not throw.
            if ((await fs.stat(entry.file)).size !== entry.bytes)
                throw new Error(`its file is not the ${entry.bytes} bytes written`);
            await sequence.loadStateFromFile(entry.file, {acceptRisk: true});
            return true;
        } catch (error) {
            this.options.logger?.warn(`A displaced conversation of '${this.modelId}' could not be restored: it starts cold`, {error: (error as Error).message});
            await sequence.clearHistory().catch(() => {});
            return false;
        } finally {
            await this.drop(entry);
        }
    }

    /** Every file removed (the model unloads); never fails (a cache folder that cannot be made holds nothing). */
    async clear() {
        for (const entry of [...this.entries])
            await this.drop(entry);
        if (this.written)
            await this.folder().then((folder) => fs.rm(folder, {recursive: true, force: true})).catch(() => {});
    }

    private async drop(entry: Entry) {
        const index = this.entries.indexOf(entry);
        if (index < 0)
            return;
        this.entries.splice(index, 1);
        this.bytes -= entry.bytes;
        await fs.rm(entry.file, {force: true}).catch(() => {});
    }

    private async folder() {
        const name = crypto.createHash("sha256").update(this.modelId).digest("hex").slice(0, 16);
        return path.join(await this.options.folder(), "prompt-states", `${name}-displaced`);
    }
}
