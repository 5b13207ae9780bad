import fs from "node:fs";
import os from "node:os";

/**
 * The nice value of threads that prepare requests off the main thread (JSON parsing, prompt rendering, audio
 * encoding): their work is bounded but can take a core for a while, and on a machine with few cores the main
 * thread, which answers every other request and health probe, should win it.
 */
export const preparationNice = 10;

/**
 * Lowers the calling thread's scheduling priority (Linux: a thread has its own nice value, set through its
 * thread id). Elsewhere, and where it is not permitted, the thread keeps the process's priority: on other systems
 * `setpriority` of an id would lower the whole process.
 */
export function lowerThreadPriority(nice = preparationNice): void {
    if (process.platform !== "linux")
        return;
    try {
        const threadId = Number(fs.readlinkSync("/proc/thread-self").split("/").at(-1));
        if (Number.isInteger(threadId) && threadId !== process.pid && os.getPriority(threadId) < nice)
            os.setPriority(threadId, nice);
    } catch {
        // No /proc, or a sandbox refusing setpriority: the thread keeps the process's priority.
    }
}
