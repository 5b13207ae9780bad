import http from "node:http";
import type { AddressInfo } from "node:net";
import Koa, { type Middleware } from "koa";
import { ApiError } from "../../src/core/http/ApiError.js";

/**
 * A body parser (jsonBody, multipartBody) alone in a Koa app on a loopback port, errors answered as the server answers
 * them, and `handler` after it: the parser tested through HTTP without a server's routes or engines.
 */
export async function startBodyParserApp(parser: Middleware, handler: Middleware, options: {silent?: boolean} = {}): Promise<{url: string, close: () => Promise<void>}> {
    const app = new Koa();
    app.silent = options.silent ?? false;
    app.use(async (ctx, next) => {
        ctx.state.logFields = {};
        try {
            await next();
        } catch (error) {
            const apiError = error instanceof ApiError ? error : ApiError.internal();
            ctx.status = apiError.status;
            ctx.body = apiError.toBody();
        }
    });
    app.use(parser);
    app.use(handler);
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
        close: () => new Promise<void>((resolve) => server.close(() => resolve()))
    };
}
