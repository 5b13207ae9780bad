import type { Middleware } from "koa";
import { ApiError } from "../../core/http/ApiError.js";
import type { ImageLinkStore } from "./output/ImageLinkStore.js";

/** GET /files/images/<name>: an image answered as a link, while it lives (60 minutes); 404 after. */
export function imageFileHandler(links: ImageLinkStore): Middleware {
    return (ctx) => {
        const image = links.get(String(ctx.params.name));
        if (image == null)
            throw ApiError.notFound("This image link does not exist or has expired (links work for 60 minutes).");
        ctx.set("Content-Type", image.contentType);
        ctx.set("Cache-Control", "private, max-age=3600, immutable");
        ctx.body = image.bytes;
    };
}
