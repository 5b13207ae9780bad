import { siblingModuleUrl } from "../../../../core/workers/siblingModuleUrl.js";
import { taskModule } from "../../../../core/workers/TaskHandle.js";
import type { tasks } from "./visionChatTasks.js";

const module = taskModule<typeof tasks>(siblingModuleUrl(import.meta.url, "./visionChatTasks"));

/** The vision chat engine's worker tasks (visionChatTasks.ts), typed for the main thread. */
export const visionChatTaskHandles = {
    describe: module.task("describe"),
    promptTokens: module.task("promptTokens"),
    generate: module.task("generate"),
    tokenize: module.task("tokenize"),
    detokenize: module.task("detokenize"),
    decide: module.task("decide"),
    release: module.task("release")
};
