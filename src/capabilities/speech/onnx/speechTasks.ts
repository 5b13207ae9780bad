/**
 * The speech capability's task module, run in the shared worker pool under the name "speech":
 * Kokoro and VITS models through transformers.js (ONNX Runtime), loaded once per worker and kept.
 * A request's sentences are synthesized in order in one task; each sentence's audio goes to the main
 * thread as soon as it is ready (moved, not copied), and cancellation is checked between sentences:
 * a worker is never terminated while ONNX Runtime runs.
 */
import { joinSamples } from "../../../media/audio/joinSamples.js";
import type { TaskContext, TaskModule } from "../../../core/workers/WorkerTask.js";
import { WorkerModelCache } from "../../../runtimes/onnx/WorkerModelCache.js";
import { fadeEdges } from "./fadeEdges.js";
import type { LoadedSpeechModel } from "./LoadedSpeechModel.js";
import { loadSpeechModel } from "./loadSpeechModel.js";
import type { SentenceAudio, SpeechModelDescription, SpeechModelSpec, SynthesizeOutcome, SynthesizeTask } from "./speechWorkerProtocol.js";

const models = new WorkerModelCache<SpeechModelSpec, LoadedSpeechModel>(loadSpeechModel, (model) => model.dispose());

export const tasks = {
    describe: async (spec: SpeechModelSpec): Promise<SpeechModelDescription> => (await models.get(spec)).description,
    synthesize: (task: SynthesizeTask, context: TaskContext<SentenceAudio>) => synthesize(task, context),
    /** Frees the model's session in this worker (the last engine using it was disposed). */
    release: (spec: SpeechModelSpec) => models.release(spec)
} satisfies TaskModule;

async function synthesize(task: SynthesizeTask, context: TaskContext<SentenceAudio>): Promise<SynthesizeOutcome> {
    const model = await models.get(task.model);
    const {sampleRate, voices} = model.description;
    if (!voices.includes(task.voice))
        throw new Error(`Unknown voice '${task.voice}'; the model has ${voices.join(", ")}.`);
    let inputTokens = 0;
    let outputSamples = 0;
    const tokens = new SentenceTokens(model, task);
    for (let index = 0; index < task.sentences.length; index++) {
        await waitForDelivery(task, index, context);
        context.throwIfCancelled();
        if (task.started != null)
            Atomics.add(task.started, 0, 1);
        const sequences = await tokens.get(index);
        const parts: Float32Array[] = [];
        let sentenceTokens = 0;
        for (const [position, ids] of sequences.entries()) {
            sentenceTokens += model.countTokens(ids);
            const generated = model.generate(ids, task.voice, task.speed);
            // The next sentences' phonemes are computed on this thread while ONNX Runtime runs this
            // pass on its own threads: requested a macrotask later, once the run is dispatched. Not
            // during the first sentence: its audio would wait for the phonemizer if the model is the
            // faster of the two, and the first audio's latency matters most.
            if (index > 0 && position === sequences.length - 1)
                setImmediate(() => tokens.request(index + 1));
            parts.push(fadeEdges(await generated, sampleRate));
        }
        // One part is used as it is; several are copied once into one.
        const samples = parts.length === 1 ? parts[0] : joinSamples(parts);
        inputTokens += sentenceTokens;
        outputSamples += samples.length;
        const message: SentenceAudio = {index, samples, tokens: sentenceTokens};
        context.progress(message, [samples.buffer as ArrayBuffer]);
        tokens.request(index + 1);
    }
    // Every sentence tokenized to nothing (the tokenizer dropped its emoji, symbols or punctuation): said as such, for a
    // 400 naming `input`, rather than an empty file. Only now is it known: a later sentence might have had words.
    if (inputTokens === 0)
        return {nothingToSpeak: true};
    return {inputTokens, outputSamples};
}

/** Sentences tokenized per call after the first, which goes alone so the first audio comes soon (see phonemizeEnglish). */
const tokenizeBatch = 8;

/**
 * A task's sentences, tokenized ahead in batches (one espeak call per batch). A failure surfaces
 * when that sentence is awaited; one never awaited (the task was cancelled) is not an unhandled rejection.
 */
class SentenceTokens {
    private readonly pending = new Map<number, Promise<number[][]>>();

    constructor(private readonly model: LoadedSpeechModel, private readonly task: SynthesizeTask) {}

    /** Starts tokenizing from sentence `from` unless that one is already under way or past the end. */
    request(from: number) {
        const {sentences, voice} = this.task;
        if (from >= sentences.length || this.pending.has(from))
            return;
        const end = Math.min(sentences.length, from === 0 ? 1 : from + tokenizeBatch);
        const batch = this.model.tokenize(sentences.slice(from, end), voice);
        for (let index = from; index < end; index++) {
            const one = batch.then((all) => all[index - from]);
            one.catch(() => {});
            this.pending.set(index, one);
        }
    }

    get(index: number): Promise<number[][]> {
        this.request(index);
        const tokens = this.pending.get(index)!;
        this.pending.delete(index);
        return tokens;
    }
}

/**
 * Sentence `index` starts once the main thread has delivered all but `lookahead` of the ones before
 * it (the engine wakes this wait on every delivery and on cancellation).
 */
async function waitForDelivery(task: SynthesizeTask, index: number, context: TaskContext) {
    for (;;) {
        const delivered = Atomics.load(task.delivered, 0);
        if (context.cancelled || delivered >= index - task.lookahead)
            return;
        const wait = Atomics.waitAsync(task.delivered, 0, delivered);
        if (wait.async)
            await wait.value;
    }
}
