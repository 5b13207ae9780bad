import { Worker } from "node:worker_threads";

/**
 * A plain worker thread running the module at `moduleUrl` (a siblingModuleUrl: `.ts` from source, `.js` built),
 * with `data` as its `workerData`: from source it goes through threadBootstrap.mjs, which registers the TypeScript
 * loader first (and finds the module in `workerData.main`).
 */
export function startModuleThread(moduleUrl: string, data: Record<string, unknown> = {}): Worker {
    if (!moduleUrl.endsWith(".ts"))
        return new Worker(new URL(moduleUrl), {workerData: data});
    return new Worker(new URL("./threadBootstrap.mjs", import.meta.url), {workerData: {...data, main: moduleUrl}});
}
