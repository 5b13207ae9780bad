import os from "node:os";
import { describe, expect, it } from "vitest";
import { preparationNice } from "../../src/core/workers/lowerThreadPriority.js";
import { startModuleThread } from "../../src/core/workers/startModuleThread.js";

// The threads that prepare requests (JSON parsing, prompt rendering) yield the CPU to the main thread, which answers
// every other request: on Linux a thread has its own nice value. The process itself keeps its priority.
describe.runIf(process.platform === "linux")("lowerThreadPriority", () => {
    it("lowers the calling thread's priority, not the process's", async () => {
        const thread = startModuleThread(new URL("../support/threads/priorityThreadMain.ts", import.meta.url).href);
        const reply = await new Promise<{before: number, after: number, process: number}>((resolve, reject) => {
            thread.once("message", resolve);
            thread.once("error", reject);
        });
        await thread.terminate();
        expect(reply.after).toBe(Math.max(reply.before, preparationNice));
        expect(reply.process).toBe(os.getPriority(process.pid));
        expect(os.getPriority(process.pid)).toBeLessThan(preparationNice);
    });
});
