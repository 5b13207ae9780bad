/**
 * Keeps the sequences that are generating on one context in step, so llama.cpp decodes their
 * next tokens in one shared batch, ordered by sequence id.
 *
 * node-llama-cpp samples each sequence of a batch separately and hands each its token as soon as
 * it is ready; the first sequence to get its token queues its next decode while the others are
 * still sampling, and its decode then runs alone. Left alone, two streams alternate forever
 * (measured: 1.0 token per batch with 2 streams, 2.9 with 4). Here each generating sequence waits,
 * after receiving a token, until every other generating sequence has received its token too; then
 * all ask for their next token in the same tick.
 *
 * (The order within the batch matters too; see sequenceOrderedBatching.ts.)
 */
export class DecodeStepBarrier {
    private participants = 0;
    private waiting: (() => void)[] = [];

    /** A sequence starts generating (after its prompt). */
    join() {
        this.participants++;
    }

    /** A sequence stops generating; the others must not wait for it any more. */
    leave() {
        this.participants--;
        if (this.waiting.length > 0 && this.waiting.length >= this.participants)
            this.releaseAll();
    }

    /** Resolves once every participant has arrived in this step. */
    arrive(): Promise<void> {
        const arrived = new Promise<void>((resolve) => this.waiting.push(resolve));
        if (this.waiting.length >= this.participants)
            this.releaseAll();
        return arrived;
    }

    private releaseAll() {
        const waiting = this.waiting;
        this.waiting = [];
        for (const resolve of waiting)
            resolve();
    }
}
