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
    for (let index = 0; index < task.sentences.length; index++) {
        await waitForDelivery(task, index, context);
        context.throwIfCancelled();
        if (task.started != null)
            Atomics.add(task.started, 0, 1);
        const parts: Float32Array[] = [];
        let tokens = 0;
        for (const ids of await model.tokenize(task.sentences[index], task.voice)) {
            tokens += model.countTokens(ids);
            parts.push(fadeEdges(await model.generate(ids, task.voice, task.speed), sampleRate));
        }
        const samples = join(parts);
        inputTokens += tokens;
        outputSamples += samples.length;
        const message: SentenceAudio = {index, samples, tokens};
        context.progress(message, [samples.buffer as ArrayBuffer]);
    }
    return {inputTokens, outputSamples};
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
