import type { BatchItem, CustomBatchingPrioritizationStrategy, LlamaContext, PrioritizedBatchItem } from "node-llama-cpp";
import { queuedDecodesOf } from "../../../runtimes/llama/internals.js";

/**
 * node-llama-cpp's batch prioritization, with the batch ordered by sequence id.
 *
 * llama.cpp splits a multi-sequence batch whose sequences are not in id order into several
 * micro-batches, so a step of 4 streams cost 15-19 ms instead of 10 ms on the 50 MB test model
 * (see bench:chat). node-llama-cpp queues decodes in whatever order the sequences' JavaScript
 * happens to resume in, and its batch items do not carry the sequence id, so the id is looked up
 * from the context's queue (queuedDecodesOf) by the identity of the token array (node-llama-cpp passes the queued
 * array through). If that internal ever changes, the order is left as it came, which is slower
 * but still correct.
 *
 * Budget: every item gets one token first (the tokens of sequences that are generating), then
 * prompt tokens fill what is left, as node-llama-cpp's default "maximumParallelism" does.
 */
export function sequenceOrderedBatching(getContext: () => LlamaContext | undefined): CustomBatchingPrioritizationStrategy {
    return ({items, size}) => {
        const queue = queuedDecodesOf(getContext());
        const sequenceOf = new Map<BatchItem["tokens"], number>();
        for (const queued of queue ?? [])
            sequenceOf.set(queued.tokens as BatchItem["tokens"], queued.sequenceId);
        const ordered = items.every((item) => sequenceOf.has(item.tokens))
            ? [...items].sort((a, b) => sequenceOf.get(a.tokens)! - sequenceOf.get(b.tokens)!)
            : [...items];

        const prioritized: PrioritizedBatchItem[] = [];
        let left = size;
        for (const item of ordered) {
            if (left === 0)
                break;
            prioritized.push({item, processAmount: 1});
            left--;
        }
        for (const entry of prioritized) {
            const extra = Math.min(entry.item.tokens.length - 1, left);
            entry.processAmount += extra;
            left -= extra;
        }
        return prioritized;
    };
}
