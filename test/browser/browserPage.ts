import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";

// Debian's chromium through playwright-core, for the playground's browser tests: skipped, saying so, where it is absent.
export const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const haveChromium = fs.existsSync(chromiumPath);
if (!haveChromium)
    console.warn(`SKIPPING the playground browser tests: no chromium at ${chromiumPath} (apt-get install chromium, or set CHROMIUM_PATH).`);

/** Where the browser tests put their screenshots (git-ignored). */
export const screenshots = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../.screenshots");

/** An element inside the page (the tests' own type check has no DOM library). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type El = any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Browser = any;

/**
 * One headless chromium for the calling test file, launched before its tests and closed after them (each test opens its
 * own context in it: its own storage, cookies and pages); call at the file's top level. Gives the browser.
 */
export function useBrowser(): () => Browser {
    let browser: Browser;
    beforeAll(async () => {
        if (!haveChromium)
            return;
        const {chromium} = await import("playwright-core");
        browser = await chromium.launch({executablePath: chromiumPath,
            args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--autoplay-policy=no-user-gesture-required"]});
    }, 60_000);
    afterAll(async () => {
        await browser?.close();
    });
    return () => browser;
}

/**
 * Opens `url` in a new context of `browser`, every request it makes checked: anything not addressed to this loopback
 * server is recorded in `outside` and refused. `init` runs in the page before its scripts (a key in sessionStorage).
 */
export async function openPage(browser: Browser, url: string, outside: string[], init?: string) {
    const context = await browser.newContext({viewport: {width: 1200, height: 900}});
    await context.route("**/*", (route: {request(): {url(): string}, abort(): Promise<void>, continue(): Promise<void>}) => {
        const target = new URL(route.request().url());
        if (target.protocol === "data:" || target.protocol === "blob:" || ["127.0.0.1", "localhost"].includes(target.hostname))
            return route.continue();
        outside.push(target.href);
        return route.abort();
    });
    if (init != null)
        await context.addInitScript(init);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error: Error) => errors.push(error.message));
    await page.goto(url);
    return {page, context, errors};
}
