// Entry of a plain worker thread (node:worker_threads, not piscina) when running from TypeScript source
// (npm test, tsx): registers the TypeScript loader in the thread, then loads the real entry named in
// workerData.main. The compiled build (npm start) starts the real entry's .js directly.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.main);
