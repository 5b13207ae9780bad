import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, openPage, screenshots, useBrowser, type El } from "./browserPage.js";
import { dataUrl, twoColourImage } from "../support/imageFixtures.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath, tinySmolVlmPath } from "../support/testModels.js";

// The playground's chat tab with an image, in a real browser (Debian's chromium through playwright-core), on the
// generated SmolVLM-shaped model (test/support/onnx/makeTestSmolVlmOnnx.ts) served by the real vision engine: an image
// attached by the file picker, by paste and by drop, shown as thumbnails (removable before sending), sent as an
// `image_url` data URL; the answer and its prompt tokens are the API's own for the same image and question, so the
// image reached the model. Skipped, saying so, without chromium.

const browser = useBrowser();

describe.skipIf(!haveChromium)("the playground's chat tab with images", () => {
    let server: TestServer;
    let red: Buffer;
    let blue: Buffer;
    const outside: string[] = [];

    beforeAll(async () => {
        fs.mkdirSync(screenshots, {recursive: true});
        [red, blue] = await Promise.all([twoColourImage("png", 40, 20),
            sharp({create: {width: 30, height: 30, channels: 3, background: {r: 0, g: 0, b: 255}}}).png().toBuffer()]);
        server = await startTestServer({
            models: [{id: "text", task: "chat", path: tinyChatModelPath}, {id: "smolvlm", task: "chat", path: tinySmolVlmPath}],
            config: {workers: 1}
        });
    }, 60_000);
    afterAll(async () => {
        await server?.stop();
    });

    /** The API's own answer for one image and a question, greedy, as the page asks it. */
    async function direct(png: Buffer | null) {
        const response = await server.post("/v1/chat/completions", {
            model: "smolvlm", temperature: 0, top_p: 1, max_tokens: 12,
            messages: [{role: "user", content: [...(png == null ? [] : [{type: "image_url", image_url: {url: dataUrl("image/png", png)}}]), {type: "text", text: "What is this?"}]}]
        });
        expect(response.status).toBe(200);
        const completion = await jsonOf(response);
        return {text: completion.choices[0].message.content as string, promptTokens: completion.usage.prompt_tokens as number};
    }

    it("attaches an image only for a model that takes images; picked, pasted or dropped, removable; sent as a data URL the model sees", async () => {
        const {page, context, errors} = await open();
        await page.waitForSelector("body[data-ready=true]");
        const attach = "[data-tab=chat] button[name=attach]";
        // A GGUF chat model takes no images: the button is disabled and says why.
        await page.selectOption("[data-tab=chat] select[name=model]", "text");
        expect(await page.$eval(attach, (button: El) => ({disabled: button.disabled, title: button.title})))
            .toEqual({disabled: true, title: "The model text does not take images"});
        await page.selectOption("[data-tab=chat] select[name=model]", "smolvlm");
        expect(await page.$eval(attach, (button: El) => button.disabled)).toBe(false);

        // The file picker (the button opens it), then a paste and a drop of another image onto the composer.
        const chooser = page.waitForEvent("filechooser");
        await page.click(attach);
        await (await chooser).setFiles({name: "red.png", mimeType: "image/png", buffer: red});
        await page.locator("[data-tab=chat] form .attachments img.thumbnail").first().waitFor();
        const base64 = blue.toString("base64");
        for (const kind of ["paste", "drop"])
            await page.evaluate(([kind, base64]: string[]) => {
                const page: El = globalThis;
                const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
                const transfer = new page.DataTransfer();
                transfer.items.add(new File([bytes], "blue.png", {type: "image/png"}));
                const target = page.document.querySelector("[data-tab=chat] textarea[name=prompt]");
                target.dispatchEvent(kind === "paste"
                    ? new page.ClipboardEvent("paste", {clipboardData: transfer, bubbles: true, cancelable: true})
                    : new page.DragEvent("drop", {dataTransfer: transfer, bubbles: true, cancelable: true}));
            }, [kind, base64]);
        await page.locator("[data-tab=chat] form .attachments img.thumbnail").nth(2).waitFor();
        const tray = () => page.$$eval("[data-tab=chat] form .attachments img.thumbnail", (images: El[]) => images.map((image) => image.getAttribute("src")));
        expect(await tray()).toEqual([dataUrl("image/png", red), dataUrl("image/png", blue), dataUrl("image/png", blue)]);
        await page.screenshot({path: path.join(screenshots, "chat-images-attached.png"), fullPage: true});
        // The pasted and the dropped image removed again: the red one alone is sent.
        await page.click("[data-tab=chat] form .attachments figure:nth-child(3) button");
        await page.click("[data-tab=chat] form .attachments figure:nth-child(2) button");
        expect(await tray()).toEqual([dataUrl("image/png", red)]);

        await page.fill("[data-tab=chat] input[name=temperature]", "0");
        await page.fill("[data-tab=chat] input[name=max_tokens]", "12");
        await page.fill("[data-tab=chat] textarea[name=prompt]", "What is this?");
        await page.click("[data-tab=chat] button[type=submit]");
        await page.locator("[data-tab=chat] .message.assistant .stats", {hasText: "tokens/s"}).waitFor();
        const shown = await page.$eval("[data-tab=chat] .messages", (node: El) => ({
            images: Array.from(node.querySelectorAll(".message.user img.thumbnail"), (image: El) => image.getAttribute("src")),
            question: node.querySelector(".message.user")?.textContent,
            answer: node.querySelector(".message.assistant .markdown")?.textContent,
            stats: node.querySelector(".message.assistant .stats")?.textContent
        }));
        expect(shown.images).toEqual([dataUrl("image/png", red)]);
        expect(shown.question).toBe("What is this?");
        expect(await tray()).toEqual([]);
        // The answer is the model's for this image: the API's own answer and prompt tokens for the same request, the
        // image's tokens among them (the question alone takes fewer).
        const [withImage, without] = [await direct(red), await direct(null)];
        expect(withImage.promptTokens).toBeGreaterThan(without.promptTokens);
        expect(shown.stats).toContain(`${withImage.promptTokens} prompt + 12 completion tokens`);
        expect(shown.answer?.trim()).toBe(withImage.text.trim());
        await page.screenshot({path: path.join(screenshots, "chat-image.png"), fullPage: true});
        expect(errors).toEqual([]);
        expect(outside).toEqual([]);
        await context.close();
    });

    /** A tab on the page, every request it makes checked: anything not addressed to this loopback server is recorded and refused. */
    function open() {
        return openPage(browser(), `${server.url}/#chat`, outside);
    }
});
