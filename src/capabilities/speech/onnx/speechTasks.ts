/**
 * The speech capability's task module, run in the shared worker pool under the name "speech":
 * Kokoro and VITS models through transformers.js (ONNX Runtime), loaded once per worker and kept.
 * A request's sentences are synthesized in order in one task; each sentence's audio goes to the main
 * thread as soon as it is ready (moved, not copied), and cancellation is checked between sentences:
 * a worker is never terminated while ONNX Runtime runs.
 */
import { env } from "@huggingface/transformers";
import type { TaskContext, TaskModule } from "../../../core/workers/WorkerTask.js";
import { fadeEdges } from "./fadeEdges.js";
import type { LoadedSpeechModel } from "./LoadedSpeechModel.js";
import { loadSpeechModel } from "./loadSpeechModel.js";
import type { SentenceAudio, SpeechModelDescription, SpeechModelSpec, SynthesizeResult, SynthesizeTask } from "./speechWorkerProtocol.js";

// Fully offline: only the manifest's folders, never the hub.
env.allowRemoteModels = false;
env.allowLocalModels = true;
env.useFSCache = false;
env.useBrowserCache = false;

const models = new Map<string, Promise<LoadedSpeechModel>>();

function loaded(spec: SpeechModelSpec): Promise<LoadedSpeechModel> {
    let model = models.get(spec.key);
    if (model == null) {
        model = loadSpeechModel(spec);
        models.set(spec.key, model);
        model.catch(() => models.delete(spec.key));
    }
    return model;
}

export const tasks = {
    describe: async (spec: SpeechModelSpec): Promise<SpeechModelDescription> => (await loaded(spec)).description,
    synthesize: (task: SynthesizeTask, context: TaskContext) => synthesize(task, context)
} satisfies TaskModule;

async function synthesize(task: SynthesizeTask, context: TaskContext): Promise<SynthesizeResult> {
    const model = await loaded(task.model);
    const {sampleRate, voices} = model.description;
    if (!voices.includes(task.voice))
        throw new Error(`Unknown voice '${task.voice}'; the model has ${voices.join(", ")}.`);
    let inputTokens = 0;
    let outputSamples = 0;
    let tokenized = prefetch(model, task, 0);
    for (let index = 0; index < task.sentences.length; index++) {
        await waitForDelivery(task, index, context);
        context.throwIfCancelled();
        if (task.started != null)
            Atomics.add(task.started, 0, 1);
        const sequences = await tokenized;
        const parts: Float32Array[] = [];
        let tokens = 0;
        for (const [position, ids] of sequences.entries()) {
            tokens += model.countTokens(ids);
            const generated = model.generate(ids, task.voice, task.speed);
            // The next sentence's phonemes are computed on this thread while ONNX Runtime runs this
            // pass on its own: started after the run is dispatched (a macrotask later), not before it.
            if (position === sequences.length - 1)
                tokenized = prefetch(model, task, index + 1, true);
            parts.push(fadeEdges(await generated, sampleRate));
        }
        if (sequences.length === 0)
            tokenized = prefetch(model, task, index + 1);
        const samples = join(parts);
        inputTokens += tokens;
        outputSamples += samples.length;
        const message: SentenceAudio = {index, samples, tokens};
        context.progress(message, [samples.buffer as ArrayBuffer]);
    }
    return {inputTokens, outputSamples};
}

/**
 * Tokenizes sentence `index` (nothing past the end). A failure surfaces when the result is awaited;
 * an unawaited one (the task was cancelled first) is not an unhandled rejection.
 */
function prefetch(model: LoadedSpeechModel, task: SynthesizeTask, index: number, afterDispatch = false): Promise<number[][]> {
    if (index >= task.sentences.length)
        return Promise.resolve([]);
    const start = () => model.tokenize(task.sentences[index], task.voice);
    const tokenized = afterDispatch ? new Promise<void>((resolve) => setImmediate(resolve)).then(start) : start();
    tokenized.catch(() => {});
    return tokenized;
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

function join(parts: Float32Array[]): Float32Array {
    if (parts.length === 1)
        return parts[0];
    const joined = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of parts) {
        joined.set(part, offset);
        offset += part.length;
    }
    return joined;
}
