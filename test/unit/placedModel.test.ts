import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineDisposedError } from "../../src/core/engines/EngineDisposedError.js";
import { taskModule } from "../../src/core/workers/TaskHandle.js";
import { WorkerPool } from "../../src/core/workers/WorkerPool.js";
import { PlacedModel } from "../../src/runtimes/onnx/PlacedModel.js";
import type { FakeModelSpec, tasks } from "../support/workers/placedModelTasks.js";

const module = taskModule<typeof tasks>(new URL("../support/workers/placedModelTasks.ts", import.meta.url).href);
const handles = {describe: module.task("describe"), release: module.task("release"), loaded: module.task("loaded")};
const loadedPerWorker = (workers: WorkerPool) => workers.runOnEach(handles.loaded, null);
const options = (spec: FakeModelSpec, preload: "each" | "one", workers?: number) =>
    ({id: spec.key, spec, tasks: handles, preload, workers, parallel: 1, queueSize: 1});

/**
 * runtimes/onnx/PlacedModel with the worker-side WorkerModelCache: placement, rollback, admission, dispose. One pool of
 * two workers for all (each test its own keys): starting a worker imports transformers.js, seconds on a busy machine.
 */
describe("PlacedModel", () => {
    let workers: WorkerPool;
    beforeAll(() => {
        workers = new WorkerPool({workers: 2});
    });
    afterAll(() => workers.close());

    it("preload 'each' loads the model on every worker of its placement, 'one' on one; dispose frees them", async () => {
        const everywhere = await PlacedModel.place(workers, options({key: "a"}, "each"), (model) => model);
        expect(await loadedPerWorker(workers)).toEqual([1, 1]);
        const pinned = await PlacedModel.place(workers, options({key: "b"}, "one", 1), (model) => model);
        expect((await loadedPerWorker(workers)).reduce((sum, count) => sum + count)).toBe(3);
        await everywhere.dispose();
        await pinned.dispose();
        expect(await loadedPerWorker(workers)).toEqual([0, 0]);
    });

    it("a build that throws releases the loaded model and rethrows", async () => {
        const placing = PlacedModel.place(workers, options({key: "c"}, "each"), () => {
            throw new RangeError("the manifest's voice is not in the model");
        });
        await expect(placing).rejects.toThrow("the manifest's voice is not in the model");
        expect(await loadedPerWorker(workers)).toEqual([0, 0]);
    });

    it("a failed load rejects, and the next placement of the same key loads afresh", async () => {
        await expect(PlacedModel.place(workers, options({key: "d", failLoad: true}, "one", 1), (model) => model)).rejects.toThrow("cannot load d");
        expect(await loadedPerWorker(workers)).toEqual([0, 0]);
        const model = await PlacedModel.place(workers, options({key: "d"}, "one", 1), (placed) => placed);
        expect(model.described.loadedOn).toBeGreaterThan(0);
        expect((await loadedPerWorker(workers)).reduce((sum, count) => sum + count)).toBe(1);
        await model.dispose();
    });

    it("dispose lets the admitted request finish, then refuses new ones with EngineDisposedError", async () => {
        const model = await PlacedModel.place(workers, options({key: "e"}, "one", 1), (placed) => placed);
        let finish!: () => void;
        const signal = new AbortController().signal;
        const admitted = model.admit(signal, () => new Promise<string>((resolve) => finish = () => resolve("done")));
        expect(model.load().busy).toBe(1);
        const disposed = model.dispose();
        await expect((async () => model.admit(signal, async () => "late"))()).rejects.toBeInstanceOf(EngineDisposedError);
        expect((await loadedPerWorker(workers)).reduce((sum, count) => sum + count)).toBe(1);
        finish();
        expect(await admitted).toBe("done");
        await disposed;
        expect(await loadedPerWorker(workers)).toEqual([0, 0]);
    });
});
