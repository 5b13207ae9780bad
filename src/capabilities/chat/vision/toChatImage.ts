import { ApiError } from "../../../core/http/ApiError.js";
import { base64Bytes, base64Padding } from "../../../media/images/decodeBase64.js";
import type { ChatImage, ChatImageType, ImageDetail } from "../ChatEngine.js";
import { imageLimits } from "./imageLimits.js";

const imageTypes: readonly ChatImageType[] = ["image/png", "image/jpeg", "image/webp", "image/gif"];
const details: readonly ImageDetail[] = ["auto", "low", "high", "original"];

/**
 * An image given as a URL (chat `image_url.url`, Responses and Decisions `image_url`): only a `data:` URL of base64
 * PNG, JPEG, WebP or GIF. A remote `http(s)` URL is refused: the server is offline by design and fetching what a
 * caller names would make it a request-forgery path. `field` is the URL's chat field, `source` the part's.
 */
export function imageFromUrl(url: string, detail: unknown, field: string, source: string): ChatImage {
    if (/^https?:/i.test(url.slice(0, 8)))
        throw ApiError.invalidRequest(
            `Invalid '${field}': image URLs are not fetched by this server (it works offline and fetches nothing a request names); send the image inline as a base64 'data:' URL.`,
            field, "image_url_not_supported");
    const match = /^data:([^;,]*)((?:;[^;,]*)*),/i.exec(url.slice(0, 256));
    if (match == null)
        throw ApiError.invalidRequest(`Invalid '${field}': expected a 'data:' URL of a base64 image ('data:image/png;base64,...').`, field, "invalid_image_url");
    if (!match[2].toLowerCase().split(";").includes("base64"))
        throw ApiError.invalidRequest(`Invalid '${field}': the 'data:' URL must be base64 encoded (';base64,').`, field, "invalid_image_url");
    return imageFromBase64(match[1].toLowerCase(), url.slice(match[0].length), detail, {type: field, data: field}, source);
}

/**
 * An image given as base64 with its media type (Anthropic's `source: {type: "base64", media_type, data}`, and a data
 * URL's parts): the type one of the four, the data within `maxImageBytes` (a 413) and of a length base64 can have.
 * Only cheap checks here, on the main thread: the base64 is decoded and the bytes checked to be the type said in the
 * worker that decodes the image (decodeChatImages). `fields` name the type's and the data's fields for errors.
 */
export function imageFromBase64(mediaType: string, data: string, detail: unknown, fields: {type: string, data: string}, source: string): ChatImage {
    const type = imageTypes.find((known) => known === mediaType);
    if (type == null)
        throw ApiError.invalidRequest(
            `Invalid '${fields.type}': image type '${mediaType}' is not supported; supported are ${imageTypes.map((known) => `'${known}'`).join(", ")}.`,
            fields.type, "invalid_image_format");
    if (base64Bytes(data.length, base64Padding(data)) > imageLimits.maxImageBytes)
        throw new ApiError(413, "invalid_request_error",
            `Invalid '${fields.data}': the image is larger than the server's limit of ${imageLimits.maxImageBytes / 1024 / 1024} MiB.`,
            {param: fields.data, code: "image_too_large"});
    if (data.length === 0 || data.length % 4 === 1)
        throw ApiError.invalidRequest(`Invalid '${fields.data}': the image data is not valid base64.`, fields.data, "invalid_image_url");
    return {type, base64: data, detail: details.find((known) => known === detail) ?? "auto", source};
}
