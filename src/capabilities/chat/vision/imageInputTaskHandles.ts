import { siblingModuleUrl } from "../../../core/workers/siblingModuleUrl.js";
import { taskModule } from "../../../core/workers/TaskHandle.js";
import type { tasks } from "./imageInputTasks.js";

const module = taskModule<typeof tasks>(siblingModuleUrl(import.meta.url, "./imageInputTasks"));

/** The worker task that decodes a request's images (imageInputTasks.ts), typed for the main thread. */
export const imageInputTaskHandles = {decode: module.task("decode")};
