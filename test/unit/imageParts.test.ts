import { describe, expect, it } from "vitest";
import type { ChatCompletionRequest } from "../../src/capabilities/chat/ChatCompletionWire.js";
import type { ChatEngineInfo } from "../../src/capabilities/chat/ChatEngine.js";
import { imageLimits } from "../../src/capabilities/chat/vision/imageLimits.js";
import { sniffImageType } from "../../src/media/images/sniffImageType.js";
import { toChatJob } from "../../src/capabilities/chat/toChatJob.js";
import { ApiError } from "../../src/core/http/ApiError.js";
import { tinyPngBase64 } from "../support/imageFixtures.js";

const seeing: ChatEngineInfo = {id: "eyes", contextSize: 2048, vocabularySize: 1000, fingerprint: "fp_test", vision: true};
const blind: ChatEngineInfo = {id: "text-only", contextSize: 2048, vocabularySize: 1000, fingerprint: "fp_test"};
const png = `data:image/png;base64,${tinyPngBase64}`;
const image = (url: string, detail?: string) => ({type: "image_url", image_url: {url, ...(detail != null ? {detail} : {})}}) as never;

function ask(content: unknown[], engine = seeing, visionModels: string[] = []) {
    return toChatJob({model: engine.id, messages: [{role: "user", content: content as never}]} satisfies ChatCompletionRequest, engine, undefined, visionModels);
}

function refusal(run: () => unknown): ApiError {
    try {
        run();
    } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        return error as ApiError;
    }
    throw new Error("accepted");
}

describe("chat image_url parts", () => {
    it("become the turn's images where they stand in its text, with their bytes and detail", () => {
        const job = ask([{type: "text", text: "Compare "}, image(png, "low"), {type: "text", text: " and "}, image(png)]);
        const [turn] = job.turns;
        expect(turn.content).toBe("Compare  and ");
        expect(turn.images!.map(({offset, image: {type, detail, source}}) => ({offset, type, detail, source}))).toEqual([
            {offset: 8, type: "image/png", detail: "low", source: "messages[0].content[1]"},
            {offset: 13, type: "image/png", detail: "auto", source: "messages[0].content[3]"}
        ]);
        expect(turn.images![0].image.base64).toBe(tinyPngBase64);
    });

    it("a text-only model's refusal names the part and the served models that see", () => {
        const error = refusal(() => ask([{type: "text", text: "what"}, image(png)], blind, ["smolvlm", "qwen-vl"]));
        expect(error).toMatchObject({status: 400, code: "model_not_multimodal", param: "messages[0].content[1]"});
        expect(error.message).toBe("The model 'text-only' does not take images (it is a text-only model); models served here that do: 'smolvlm', 'qwen-vl'.");
    });

    it.each([
        ["a remote https URL", "https://example.com/cat.png", "image_url_not_supported", "not fetched"],
        ["a remote http URL", "HTTP://169.254.169.254/latest", "image_url_not_supported", "not fetched"],
        ["a file URL", "file:///etc/passwd", "invalid_image_url", "'data:' URL"],
        ["a data URL that is not base64", "data:image/png,abc", "invalid_image_url", "base64"],
        ["an SVG", `data:image/svg+xml;base64,${Buffer.from("<svg/>").toString("base64")}`, "invalid_image_format", "'image/svg+xml' is not supported"],
        ["base64 of an impossible length", "data:image/png;base64,iVBORw0KG", "invalid_image_url", "not valid base64"],
        ["no data at all", "data:image/png;base64,", "invalid_image_url", "not valid base64"]
    ])("%s is refused naming the URL's field", (_name, url, code, words) => {
        const error = refusal(() => ask([image(url)]));
        expect(error).toMatchObject({status: 400, code, param: "messages[0].content[0].image_url.url"});
        expect(error.message).toContain(words);
    });

    it("an image past the byte limit is a 413 naming the part's URL, told from its base64's length", () => {
        const huge = `data:image/png;base64,${"A".repeat(Math.ceil(imageLimits.maxImageBytes / 3) * 4 + 8)}`;
        expect(refusal(() => ask([image(huge)]))).toMatchObject({status: 413, code: "image_too_large", param: "messages[0].content[0].image_url.url"});
    });

    it(`more than ${imageLimits.maxImages} images are refused naming the first one past the limit`, () => {
        const error = refusal(() => ask(Array.from({length: imageLimits.maxImages + 1}, () => image(png))));
        expect(error).toMatchObject({status: 400, code: "too_many_images", param: `messages[0].content[${imageLimits.maxImages}]`});
    });

    it("only user messages carry images", () => {
        const error = refusal(() => toChatJob({model: "eyes", messages: [{role: "system", content: [image(png)]}, {role: "user", content: "hi"}]}, seeing));
        expect(error.param).toBe("messages[0].content[0].type");
    });
});

it("an image one byte within the limit is taken", () => {
    const bytes = imageLimits.maxImageBytes;
    const within = `data:image/png;base64,${"A".repeat(Math.floor(bytes / 3) * 4)}${bytes % 3 === 0 ? "" : bytes % 3 === 1 ? "AA==" : "AAA="}`;
    expect(ask([image(within)]).turns[0].images).toHaveLength(1);
    const past = `data:image/png;base64,${"A".repeat(Math.floor((bytes + 1) / 3) * 4)}${(bytes + 1) % 3 === 0 ? "" : (bytes + 1) % 3 === 1 ? "AA==" : "AAA="}`;
    expect(refusal(() => ask([image(past)])).status).toBe(413);
});

describe("sniffImageType", () => {
    it("reads the four formats' signatures", () => {
        expect(sniffImageType(Buffer.from(tinyPngBase64, "base64"))).toBe("image/png");
        expect(sniffImageType(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
        expect(sniffImageType(Buffer.from("GIF89a"))).toBe("image/gif");
        expect(sniffImageType(Buffer.from("RIFF\0\0\0\0WEBPVP8 "))).toBe("image/webp");
        expect(sniffImageType(Buffer.from("RIFF\0\0\0\0WAVEfmt "))).toBeNull();
    });
});
