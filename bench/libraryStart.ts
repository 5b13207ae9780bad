/**
 * `npm run bench:library-start [count] [--no-peer]`: `npm start -- <folder>` with a folder of generated chat models (~56 MB each,
 * default 20): the time from spawning the server to ready, and its resident memory then, against the same server
 * given one of them, and against llama-server in router mode (`--models-dir`, built as bench:peer builds it) given the
 * same folder. Every model is registered and none loaded: the memory of none of them until asked. Figures:
 * docs/models.md "A folder of models".
 */
import fs from "node:fs";
import path from "node:path";
import { makeTestLlamaGguf, bench50mbOptions } from "../test/support/gguf/makeTestLlamaGguf.js";
import { spawnServer } from "../test/support/spawnServer.js";
import { buildLlamaServer } from "./peer/buildLlamaServer.js";
import { LlamaServerProcess } from "./peer/LlamaServerProcess.js";
import { cacheDir, projectRoot } from "./peer/peerModels.js";
import { median } from "./stats.js";

const args = process.argv.slice(2);
const count = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 20);
const withPeer = !args.includes("--no-peer");
const runs = 3;
const folder = path.join(cacheDir, `library-${count}`);
fs.mkdirSync(folder, {recursive: true});
for (let index = 1; index <= count; index++) {
    const file = path.join(folder, `model-${String(index).padStart(2, "0")}.gguf`);
    if (!fs.existsSync(file))
        await makeTestLlamaGguf(file, {...bench50mbOptions, seed: index});
}
const one = path.join(cacheDir, "library-one");
fs.mkdirSync(one, {recursive: true});
if (!fs.existsSync(path.join(one, "model-01.gguf")))
    fs.copyFileSync(path.join(folder, "model-01.gguf"), path.join(one, "model-01.gguf"));
const folderBytes = fs.readdirSync(folder).reduce((sum, name) => sum + fs.statSync(path.join(folder, name)).size, 0);

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
const mb = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MB`;

async function ours(target: string) {
    const started = performance.now();
    const server = await spawnServer([target], {PRELOAD_ALL: "", LOG_LEVEL: "info"});
    const seconds = (performance.now() - started) / 1000;
    const listed = await (await fetch(`${server.url}/v1/models`)).json() as {data: {status: {value: string}}[]};
    const rss = rssOf(server.child.pid!);
    await server.stop();
    return {seconds, rss, models: listed.data.length, loaded: listed.data.filter((model) => model.status.value !== "unloaded").length};
}

async function peer(binary: string, target: string) {
    const started = performance.now();
    const server = await LlamaServerProcess.start(binary, ["--models-dir", target, "--models-max", "2", "-t", "2"]);
    const seconds = (performance.now() - started) / 1000;
    const listed = await (await fetch(`${server.baseUrl}/models`)).json() as {data: unknown[]};
    await server.stop();
    return {seconds, models: listed.data.length};
}

console.log(`${count} generated chat models, ${mb(folderBytes)} in ${folder}; ${runs} runs each, medians`);
const rows: {name: string, seconds: number, rss: number, models: number, loaded?: number}[] = [];
for (const [name, target] of [[`ours, ${count} models`, folder], ["ours, 1 model", one]] as const) {
    const results = [];
    for (let run = 0; run < runs; run++)
        results.push(await ours(target));
    rows.push({name, seconds: median(results.map((result) => result.seconds)), rss: median(results.map((result) => result.rss)), models: results[0].models, loaded: results[0].loaded});
}
let binary: string | null = null;
try {
    binary = withPeer ? buildLlamaServer(projectRoot, cacheDir) : null;
} catch (error) {
    console.log(`llama-server not compared: ${(error as Error).message}`);
}
if (binary != null) {
    const results = [];
    for (let run = 0; run < runs; run++)
        results.push(await peer(binary, folder));
    rows.push({name: `llama-server router, ${count} models`, seconds: median(results.map((result) => result.seconds)), rss: NaN, models: results[0].models});
}
for (const row of rows)
    console.log(`${row.name.padEnd(34)} ready in ${row.seconds.toFixed(2)} s  RSS ${Number.isNaN(row.rss) ? "n/a" : mb(row.rss)}  models listed ${row.models}` +
        (row.loaded != null ? `, loaded ${row.loaded}` : ""));
console.log(`ready time, ${count} models / 1 model: ${(rows[0].seconds / rows[1].seconds).toFixed(2)}x; RSS ${(rows[0].rss / rows[1].rss).toFixed(2)}x`);
if (rows[2] != null)
    console.log(`ready time, ours / llama-server router (${count} models): ${(rows[0].seconds / rows[2].seconds).toFixed(2)}x`);
