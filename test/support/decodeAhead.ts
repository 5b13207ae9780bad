import type { LlamaContext, LlamaContextSequence, Token } from "node-llama-cpp";
import { nativeContextOf, sequenceIdOf, wrapNativeContext, type NativeContext } from "../../src/runtimes/llama/internals.js";

/** The skip line of the tests of the decode ahead (the project's patch, native build only). */
export const noDecodeAhead = "skipped: this binary does not decode ahead (the prebuilt one, or a native build older than the patch: run `npm run build:native`)";

/** Whether the context's binary can decode ahead at all (whatever the model: decodesAhead also asks whether the model can undo one). */
export function binaryDecodesAhead(context: LlamaContext): boolean {
    return typeof nativeContextOf(context).settlePrefetch === "function";
}

/** The last position the native KV cache (or recurrent state) holds for the sequence (-1: none). */
export function kvEnd(context: LlamaContext, sequenceId: number): number {
    return (nativeContextOf(context) as NativeContext & {getSequenceKvCacheMaxPosition(id: number): number}).getSequenceKvCacheMaxPosition(sequenceId);
}

/** Makes the context decode each step only when asked: the rows `decodeBatch` gets lose their request to decode ahead. */
export function withoutDecodeAhead(context: LlamaContext) {
    wrapNativeContext(context, (original) => ({
        decodeBatch: (samples) => original.decodeBatch(samples?.map((row) => row.slice(0, 5) as typeof row))
    }));
}

/** Counts the rows `decodeBatch` gets that ask for their sample to be decoded ahead (passing them on as they are). */
export function countDecodeAhead(context: LlamaContext, count: {ahead: number}) {
    wrapNativeContext(context, (original) => ({
        decodeBatch: (samples) => {
            count.ahead += samples?.filter((row) => row[5] === true).length ?? 0;
            return original.decodeBatch(samples);
        }
    }));
}

/**
 * `count` greedy tokens after `prompt` on `sequence` (decoded ahead if `ahead`), the caller's tokens put in place of the
 * sampled one where `replacement` gives some; then where the native memory and node-llama-cpp say the sequence ends.
 */
export async function generateReplacing(sequence: LlamaContextSequence, prompt: Token[], count: number, ahead: boolean,
    replacement: (tokens: readonly Token[]) => Token[] | undefined) {
    const tokens: Token[] = [];
    const iterator = sequence.evaluate(prompt, {temperature: 0, ...(ahead ? {_prefetchNextDecode: true} : {})} as Record<string, unknown>);
    let result = await iterator.next();
    while (!result.done && tokens.length < count) {
        tokens.push(result.value);
        result = await iterator.next(replacement(tokens));
    }
    await iterator.return(undefined);
    return {tokens, kvEnd: kvEnd(sequence.context, sequenceIdOf(sequence)), nextTokenIndex: sequence.nextTokenIndex};
}

/**
 * Runs `body` with node-llama-cpp's thread splitter (the context's private `_threadSplitterConsumer`) stood in for by
 * one that hands out `count()` threads before each batch, and puts the real one back after. The context gives its
 * consumer back when it idles (a timer that disposes it) and takes a new one when it decodes again: the splitter's
 * `createConsumer` hands out the stand-in meanwhile too, and the stand-in can be disposed (it was not: the timer firing
 * between two batches threw an unhandled TypeError).
 */
export async function withThreadCounts<T>(context: LlamaContext, count: () => number, body: () => Promise<T>): Promise<T> {
    const internals = context as unknown as {_threadSplitterConsumer?: unknown, _llama: {_threadsSplitter: {createConsumer: unknown}}};
    const splitter = internals._llama._threadsSplitter;
    const createConsumer = splitter.createConsumer;
    const consumer = internals._threadSplitterConsumer;
    const standIn = () => ({getAllocationToConsume: () => [count(), {dispose() {}}], dispose() {}});
    splitter.createConsumer = standIn;
    if (consumer != null)
        internals._threadSplitterConsumer = standIn();
    try {
        return await body();
    } finally {
        splitter.createConsumer = createConsumer;
        internals._threadSplitterConsumer = consumer;
    }
}

