import { ApiError } from "../../../core/http/ApiError.js";
import type { ChatImage, ChatImageType, ImageDetail } from "../ChatEngine.js";
import { imageLimits } from "./imageLimits.js";

const imageTypes: readonly ChatImageType[] = ["image/png", "image/jpeg", "image/webp", "image/gif"];
const details: readonly ImageDetail[] = ["auto", "low", "high", "original"];
const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** What an image's first bytes say it is (PNG, JPEG, WebP, GIF signatures); null for anything else. */
export function sniffImageType(bytes: Uint8Array): ChatImageType | null {
    const starts = (...signature: number[]) => signature.every((byte, index) => bytes[index] === byte);
    if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a))
        return "image/png";
    if (starts(0xff, 0xd8, 0xff))
        return "image/jpeg";
    if (starts(0x47, 0x49, 0x46, 0x38))
        return "image/gif";
    if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50)
        return "image/webp";
    return null;
}

/**
 * An image given as a URL (chat `image_url.url`, Responses and Decisions `image_url`): only a `data:` URL of base64
 * PNG, JPEG, WebP or GIF. A remote `http(s)` URL is refused: the server is offline by design and fetching what a
 * caller names would make it a request-forgery path. `field` is the URL's chat field, `source` the part's.
 */
export function imageFromUrl(url: string, detail: unknown, field: string, source: string): ChatImage {
    if (/^https?:/i.test(url))
        throw ApiError.invalidRequest(
            `Invalid '${field}': image URLs are not fetched by this server (it works offline and fetches nothing a request names); send the image inline as a base64 'data:' URL.`,
            field, "image_url_not_supported");
    const match = /^data:([^;,]*)((?:;[^;,]*)*),/i.exec(url);
    if (match == null)
        throw ApiError.invalidRequest(`Invalid '${field}': expected a 'data:' URL of a base64 image ('data:image/png;base64,...').`, field, "invalid_image_url");
    if (!match[2].toLowerCase().split(";").includes("base64"))
        throw ApiError.invalidRequest(`Invalid '${field}': the 'data:' URL must be base64 encoded (';base64,').`, field, "invalid_image_url");
    return imageFromBase64(match[1].toLowerCase(), url.slice(match[0].length), detail, {type: field, data: field}, source);
}

/**
 * An image given as base64 with its media type (Anthropic's `source: {type: "base64", media_type, data}`, and a data
 * URL's parts): the type one of the four, the data valid base64 within `maxImageBytes`, whose first bytes are an image
 * of the type it says. `fields` name the type's and the data's fields for errors.
 */
export function imageFromBase64(mediaType: string, data: string, detail: unknown, fields: {type: string, data: string}, source: string): ChatImage {
    const type = imageTypes.find((known) => known === mediaType);
    if (type == null)
        throw ApiError.invalidRequest(
            `Invalid '${fields.type}': image type '${mediaType}' is not supported; supported are ${imageTypes.map((known) => `'${known}'`).join(", ")}.`,
            fields.type, "invalid_image_format");
    const encodedLimit = Math.ceil(imageLimits.maxImageBytes / 3) * 4;
    if (data.length > encodedLimit + 4)
        throw new ApiError(413, "invalid_request_error",
            `Invalid '${fields.data}': the image is larger than the server's limit of ${imageLimits.maxImageBytes / 1024 / 1024} MB.`,
            {param: fields.data, code: "image_too_large"});
    if (data.length % 4 === 1 || !base64.test(data))
        throw ApiError.invalidRequest(`Invalid '${fields.data}': the image data is not valid base64.`, fields.data, "invalid_image_url");
    const bytes = new Uint8Array(Buffer.from(data, "base64"));
    if (bytes.length > imageLimits.maxImageBytes)
        throw new ApiError(413, "invalid_request_error",
            `Invalid '${fields.data}': the image is larger than the server's limit of ${imageLimits.maxImageBytes / 1024 / 1024} MB.`,
            {param: fields.data, code: "image_too_large"});
    const sniffed = sniffImageType(bytes);
    if (sniffed == null)
        throw ApiError.invalidRequest(`Invalid '${fields.data}': the data is not a PNG, JPEG, WebP or GIF image.`, fields.data, "invalid_image_format");
    if (sniffed !== type)
        throw ApiError.invalidRequest(`Invalid '${fields.data}': the data is a '${sniffed}' image, not '${type}' as '${fields.type}' says.`, fields.data, "invalid_image_format");
    return {type, bytes, detail: details.find((known) => known === detail) ?? "auto", source};
}
