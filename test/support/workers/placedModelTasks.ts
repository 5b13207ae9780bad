/**
 * A task module for test/unit/placedModel.test.ts: "models" that are only a record of being loaded, held in the
 * runtimes/onnx WorkerModelCache as the real task modules hold theirs, so a test can see which workers hold one.
 */
import { threadId } from "node:worker_threads";
import type { TaskModule } from "../../../src/core/workers/WorkerTask.js";
import { WorkerModelCache } from "../../../src/runtimes/onnx/WorkerModelCache.js";

export type FakeModelSpec = {key: string, failLoad?: boolean};

const models = new WorkerModelCache<FakeModelSpec, {threadId: number}>(async (spec) => {
    if (spec.failLoad === true)
        throw new Error(`cannot load ${spec.key}`);
    return {threadId};
}, async () => {});

export const tasks = {
    describe: async (spec: FakeModelSpec) => ({loadedOn: (await models.get(spec)).threadId}),
    release: (spec: FakeModelSpec) => models.release(spec),
    /** How many models this worker holds. */
    loaded: () => models.size
} satisfies TaskModule;
