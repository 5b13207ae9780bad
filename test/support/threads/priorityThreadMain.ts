import fs from "node:fs";
import os from "node:os";
import { parentPort } from "node:worker_threads";
import { lowerThreadPriority } from "../../../src/core/workers/lowerThreadPriority.js";

/** A thread for test/unit/lowerThreadPriority.test.ts: lowers its own priority and reports its nice value and the process's. */
const threadId = Number(fs.readlinkSync("/proc/thread-self").split("/").at(-1));
const before = os.getPriority(threadId);
lowerThreadPriority();
parentPort!.postMessage({before, after: os.getPriority(threadId), process: os.getPriority(process.pid)});
