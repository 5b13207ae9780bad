// Runs a TypeScript entry (process.argv[2]) from source for spawned server processes: registers tsx in this
// thread instead of `node --import tsx`, so that process.execArgv stays empty. node-llama-cpp forks a child
// with process.execArgv to test its prebuilt binary before loading it on Linux; with `--import tsx` that child
// started tsx's loader too (about 2.5 s of CPU per server start on the 2-core machine, against ~0.3 s).
// The server's worker threads register tsx themselves (workerBootstrap.mjs, threadBootstrap.mjs).
import path from "node:path";
import { pathToFileURL } from "node:url";
import { register } from "tsx/esm/api";

const entry = path.resolve(process.argv[2]);
// The entry sees the command line `node <entry> <args>`, as with `node --import tsx <entry> <args>`.
process.argv.splice(1, 2, entry);
register();
await import(pathToFileURL(entry).href);
