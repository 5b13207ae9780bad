import type { Middleware } from "koa";
import type { ApiKeyStore } from "../auth/ApiKeyStore.js";
import type { HealthDetailsSetting } from "../settings/serverSettings.js";
import type { EngineHost } from "../core/engines/EngineHost.js";

/**
 * GET /health, without auth: 200 when the server can take requests (models load on demand; the preloaded
 * ones are loaded), 503 while preloaded models load (and while one of them has failed), with how busy
 * each loaded model is (parallel sequences, busy sequences, waiting requests). Those details
 * (model ids, loads, the binary) are shown to callers without a valid key only when `details` says
 * so: `auto` shows them while the server has no keys (it then answers only this machine), and to
 * key holders only once it has.
 */
export function healthHandler(engines: EngineHost, keys: ApiKeyStore, details: HealthDetailsSetting): Middleware {
    return (ctx) => {
        const ready = engines.state === "ready";
        ctx.status = ready ? 200 : 503;
        if (!ready)
            ctx.set("Retry-After", "1");
        const status = ready ? "ok" : engines.state;
        ctx.body = showDetails(ctx.get("Authorization"), keys, details) ? {status, models: engines.loads()} : {status};
    };
}

function showDetails(authorization: string, keys: ApiKeyStore, details: HealthDetailsSetting) {
    if (details === "public" || (details === "auto" && keys.state === "open"))
        return true;
    const key = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
    return key != null && keys.state === "on" && keys.verify(key) != null;
}
