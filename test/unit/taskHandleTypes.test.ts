import { describe, expect, expectTypeOf, it } from "vitest";
import { embeddingTaskHandles } from "../../src/capabilities/embeddings/onnx/embeddingTaskHandles.js";
import type { DescribeResult, EmbedTaskResult, OnnxModelSpec } from "../../src/capabilities/embeddings/onnx/workerProtocol.js";
import type { ImageProgress } from "../../src/capabilities/images/ImageEngine.js";
import { imageTaskHandles } from "../../src/capabilities/images/onnx/imageTaskHandles.js";
import type { GenerateTask } from "../../src/capabilities/images/onnx/workerProtocol.js";
import { speechTaskHandles } from "../../src/capabilities/speech/onnx/speechTaskHandles.js";
import type { SentenceAudio, SynthesizeOutcome, SynthesizeTask } from "../../src/capabilities/speech/onnx/speechWorkerProtocol.js";
import type { WorkerPool } from "../../src/core/workers/WorkerPool.js";

// Compile-time checks: `npm test` type-checks this file first (tsc), so a call that mis-types a
// payload or a progress message, and still compiles, fails the suite at the @ts-expect-error line.
// The function is never called: nothing here needs a worker.
function calls(pool: WorkerPool, spec: OnnxModelSpec, synthesize: SynthesizeTask, generate: GenerateTask) {
    expectTypeOf(pool.run(embeddingTaskHandles.describe, spec)).resolves.toEqualTypeOf<DescribeResult>();
    expectTypeOf(pool.run(embeddingTaskHandles.embed, {model: spec, ids: [new Int32Array([101, 102])]})).resolves.toEqualTypeOf<EmbedTaskResult>();
    expectTypeOf(pool.run(speechTaskHandles.synthesize, synthesize, {onProgress: (audio) => expectTypeOf(audio).toEqualTypeOf<SentenceAudio>()}))
        .resolves.toEqualTypeOf<SynthesizeOutcome>();
    pool.run(imageTaskHandles.generate, generate, {onProgress: (progress) => expectTypeOf(progress).toEqualTypeOf<ImageProgress>()});

    // @ts-expect-error: synthesize takes a SynthesizeTask, not a string
    pool.run(speechTaskHandles.synthesize, "Hello.");
    // @ts-expect-error: describe takes the model's spec; a synthesize task is not one
    pool.run(embeddingTaskHandles.describe, synthesize);
    // @ts-expect-error: synthesize's progress is a SentenceAudio, which has no `step`
    pool.run(speechTaskHandles.synthesize, synthesize, {onProgress: (audio) => audio.step});
    // @ts-expect-error: embed sends no progress at all
    pool.run(embeddingTaskHandles.embed, {model: spec, ids: []}, {onProgress: (message: {step: number}) => message.step});
}

describe("worker task handles", () => {
    it("name their module by URL and their task by name, with no module list in the pool", () => {
        expect(speechTaskHandles.synthesize).toEqual({moduleUrl: expect.stringMatching(/\/speechTasks\.(ts|js)$/), task: "synthesize"});
        expect(imageTaskHandles.generate.moduleUrl).toMatch(/\/imageTasks\.(ts|js)$/);
        expect(typeof calls).toBe("function");
    });
});
