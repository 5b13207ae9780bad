import type Router from "@koa/router";
import type { Context } from "koa";
import type { PlaygroundFiles } from "./PlaygroundFiles.js";

/**
 * The page's security headers: scripts, styles and requests only from this server (no inline script, nothing
 * from elsewhere), images and audio also from the page's own blob:/data: URLs, never framed, no referrer.
 */
export const playgroundHeaders: Readonly<Record<string, string>> = {
    "Content-Security-Policy": [
        "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob:", "media-src 'self' blob:",
        "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"
    ].join("; "),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache"
};

/**
 * GET / (the page) and GET /ui/:file (its modules and style), on the public router: the page holds no
 * secret (a key is typed by the person using it and kept in their tab's sessionStorage), and the host
 * check in front of every route applies to it as to the API.
 */
export function playgroundRoutes(router: Router, files: PlaygroundFiles): void {
    const serve = (ctx: Context, name: string) => {
        const file = files.get(name);
        if (file == null)
            return;
        ctx.set(playgroundHeaders);
        ctx.type = file.type;
        ctx.body = file.bytes;
    };
    router.get("/", (ctx) => serve(ctx, "index.html"));
    router.get("/ui/:file", (ctx) => serve(ctx, String(ctx.params.file)));
}
