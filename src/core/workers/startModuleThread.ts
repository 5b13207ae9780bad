import { Worker } from "node:worker_threads";

/**
 * A plain worker thread running the module at `moduleUrl` (a siblingModuleUrl: `.ts` from source, `.js` built):
 * from source it goes through threadBootstrap.mjs, which registers the TypeScript loader first.
 */
export function startModuleThread(moduleUrl: string): Worker {
    if (!moduleUrl.endsWith(".ts"))
        return new Worker(new URL(moduleUrl));
    return new Worker(new URL("./threadBootstrap.mjs", import.meta.url), {workerData: {main: moduleUrl}});
}
