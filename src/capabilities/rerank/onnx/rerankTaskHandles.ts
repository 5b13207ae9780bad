import { siblingModuleUrl } from "../../../core/workers/siblingModuleUrl.js";
import { taskModule } from "../../../core/workers/TaskHandle.js";
import type { tasks } from "./rerankTasks.js";

const module = taskModule<typeof tasks>(siblingModuleUrl(import.meta.url, "./rerankTasks"));

/** The rerank capability's worker tasks (rerankTasks.ts), typed for the main thread. */
export const rerankTaskHandles = {
    describe: module.task("describe"),
    tokenize: module.task("tokenize"),
    score: module.task("score"),
    release: module.task("release")
};
