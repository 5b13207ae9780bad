import { siblingModuleUrl } from "../../../core/workers/siblingModuleUrl.js";
import { taskModule } from "../../../core/workers/TaskHandle.js";
import type { tasks } from "./imageTasks.js";

const module = taskModule<typeof tasks>(siblingModuleUrl(import.meta.url, "./imageTasks"));

/** The images capability's worker tasks (imageTasks.ts), typed for the main thread. */
export const imageTaskHandles = {
    describe: module.task("describe"),
    generate: module.task("generate"),
    release: module.task("release"),
    loadedPipelines: module.task("loadedPipelines")
};
