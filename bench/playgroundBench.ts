/**
 * `npm run bench:playground`: the playground page's weight and time to interactive on the loopback server
 * (the committed stories260K model, a child process like `npm start`), in Debian's chromium through
 * playwright-core: each of 15 loads in a fresh browser context (nothing cached), time from navigation start
 * to the page's `playground-ready` mark (models listed, tabs built), and the bytes the page fetched. Then the
 * chat tab's Markdown parser (playground/markdown.js, in Node) on hostile model output: 100 KB of unclosed links,
 * brackets, bold markers, emphasis and underscores, and 200 KB of the same to show the growth (CPU time of the
 * parse, median of 5: on a machine shared with other work, wall time would measure the neighbours).
 * Figures: docs/playground.md.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BenchServer } from "./serverClient.js";
import { fixed, median } from "./stats.js";

const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!fs.existsSync(chromiumPath)) {
    console.error(`No chromium at ${chromiumPath} (apt-get install chromium, or set CHROMIUM_PATH).`);
    process.exit(1);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "los-bench-playground-"));
const manifestPath = path.join(tmp, "models.json");
fs.writeFileSync(manifestPath, JSON.stringify({models: [{id: "stories", task: "chat", path: path.join(root, "models/demo/stories260K.gguf")}]}));
const server = await BenchServer.start({cwd: root, manifestPath, keysFile: path.join(tmp, "no-keys.json"), threads: 1, parallel: 1, startTimeoutMs: 60_000});
const {chromium} = await import("playwright-core");
const browser = await chromium.launch({executablePath: chromiumPath, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]});
try {
    const ready: number[] = [];
    const bytes: number[] = [];
    const requests: number[] = [];
    for (let run = 0; run < 15; run++) {
        const context = await browser.newContext();
        const page = await context.newPage();
        const bodies: Promise<number>[] = [];
        page.on("response", (response) => bodies.push(response.body().then((body) => body.length, () => 0)));
        await page.goto(server.baseUrl.replace(/\/v1\/?$/, "") + "/");
        await page.waitForSelector("body[data-ready=true]");
        ready.push(await page.evaluate("performance.getEntriesByName('playground-ready')[0].startTime") as number);
        await page.waitForLoadState("networkidle");
        bytes.push((await Promise.all(bodies)).reduce((sum, length) => sum + length, 0));
        requests.push(bodies.length);
        await context.close();
    }
    console.log(`playground: ${requests[0]} requests, ${fixed(median(bytes) / 1024, 1)} KiB fetched (page, modules, style, /models), uncompressed`);
    console.log(`time to interactive (navigation start -> models listed, tabs built): median ${fixed(median(ready), 1)} ms, min ${fixed(Math.min(...ready), 1)}, max ${fixed(Math.max(...ready), 1)} (15 cold loads)`);
    const markdownModule = path.join(root, "playground/markdown.js");
    const {parseMarkdown} = await import(markdownModule) as {parseMarkdown(text: string): unknown};
    for (const unit of ["[a](", "[", "**", "*a **b [c](", "_"]) {
        const times = [100_000, 200_000].map((length) => {
            const text = unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
            const runs = Array.from({length: 5}, () => {
                const started = process.cpuUsage();
                parseMarkdown(text);
                const used = process.cpuUsage(started);
                return (used.user + used.system) / 1000;
            });
            return `${length / 1000} KB ${fixed(median(runs), 1)} ms`;
        });
        console.log(`Markdown parse of ${JSON.stringify(unit)} repeated: ${times.join(", ")} (CPU time, median of 5)`);
    }
} finally {
    await browser.close();
    await server.stop();
    fs.rmSync(tmp, {recursive: true, force: true});
}
