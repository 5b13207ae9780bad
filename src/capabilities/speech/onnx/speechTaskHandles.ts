import { siblingModuleUrl } from "../../../core/workers/siblingModuleUrl.js";
import { taskModule } from "../../../core/workers/TaskHandle.js";
import type { tasks } from "./speechTasks.js";

const module = taskModule<typeof tasks>(siblingModuleUrl(import.meta.url, "./speechTasks"));

/** The speech capability's worker tasks (speechTasks.ts), typed for the main thread. */
export const speechTaskHandles = {
    describe: module.task("describe"),
    synthesize: module.task("synthesize"),
    release: module.task("release")
};
