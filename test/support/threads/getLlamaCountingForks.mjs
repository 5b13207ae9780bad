// Calls node-llama-cpp's getLlama and reports how many child processes it forked (test/model/bindingLoadedOnce.test.ts):
// in a worker thread, with workerData.options, posting {forks, buildType}; as a process, with the options as JSON in
// argv[2], printing them. child_process.fork is counted through the builtin module's
// exports, synced to the ESM named exports node-llama-cpp imports.
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import { parentPort, workerData } from "node:worker_threads";

let forks = 0;
const fork = childProcess.fork;
childProcess.fork = (...args) => {
    forks++;
    return fork(...args);
};
syncBuiltinESMExports();
const { getLlama } = await import("node-llama-cpp");
const llama = await getLlama(parentPort == null ? JSON.parse(process.argv[2]) : workerData.options);
if (parentPort == null)
    console.log(JSON.stringify({forks, buildType: llama.buildType}));
else
    parentPort.postMessage({forks, buildType: llama.buildType});
await llama.dispose();
