import { siblingModuleUrl } from "../../../core/workers/siblingModuleUrl.js";
import { taskModule } from "../../../core/workers/TaskHandle.js";
import type { tasks } from "./transcriptionTasks.js";

const module = taskModule<typeof tasks>(siblingModuleUrl(import.meta.url, "./transcriptionTasks"));

/** The transcription capability's worker tasks (transcriptionTasks.ts), typed for the main thread. */
export const transcriptionTaskHandles = {
    describe: module.task("describe"),
    transcribe: module.task("transcribe"),
    release: module.task("release")
};
