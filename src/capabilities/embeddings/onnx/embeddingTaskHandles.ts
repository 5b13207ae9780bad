import { siblingModuleUrl } from "../../../core/workers/siblingModuleUrl.js";
import { taskModule } from "../../../core/workers/TaskHandle.js";
import type { tasks } from "./embeddingTasks.js";

const module = taskModule<typeof tasks>(siblingModuleUrl(import.meta.url, "./embeddingTasks"));

/** The embeddings capability's worker tasks (embeddingTasks.ts), typed for the main thread. */
export const embeddingTaskHandles = {
    describe: module.task("describe"),
    tokenize: module.task("tokenize"),
    embed: module.task("embed"),
    release: module.task("release")
};
