/**
 * The audio case of `npm run bench:security` (issue 29, finding 3): uploads that decode to hours, each sent one after
 * the other (at least `runs` times and for 5 s) to a server process with the tiny generated Whisper model and the
 * default --max-audio-seconds (2 hours): a WAV whose header says 1 Hz; the same padded to the 25 MB upload limit (what
 * receiving any upload of that size costs: it is refused from its header); 600 s of FLAC silence (28 KB) repeated to
 * 25 MB (147 hours) with STREAMINFO's total true, 0 ("unknown": counted until the limit) or left at 600 s. Then the
 * hidden one again, its client leaving once the decoding runs: how long until the worker is free. Prints, per upload,
 * the answer, ms per request, /health/live polled meanwhile (`pollLive`, securityBench's poller process, bench/livePoller.ts) and the
 * server's RSS (MiB) before, at its peak (sampled every 50 ms), right after and 30 s after.
 * Figures: docs/security.md ("Audio uploads").
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { flacSilence, uploadLimitBytes, wavAtRate } from "../test/support/audioBombs.js";
import { encodeFixture, testSignal } from "../test/support/audioFixtures.js";
import { makeTestWhisperOnnx } from "../test/support/onnx/makeTestWhisperOnnx.js";
import { BenchServer } from "./serverClient.js";
import { fixed, median, percentile } from "./stats.js";

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function audioBombsCase(root: string, pollLive: (baseUrl: string, until: Promise<unknown>) => Promise<number[]>, runs = 5) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-bench-audio-"));
    makeTestWhisperOnnx(path.join(dir, "tiny-whisper"), {seed: 3});
    const manifest = path.join(dir, "models.json");
    fs.writeFileSync(manifest, JSON.stringify({models: [{id: "whisper", task: "transcription", path: path.join(dir, "tiny-whisper")}]}));
    const server = await BenchServer.start({cwd: root, manifestPath: manifest, keysFile: path.join(dir, "no-keys.json"), threads: 1, parallel: 2, startTimeoutMs: 120_000});
    const send = (bytes: Uint8Array, signal?: AbortSignal) => {
        const body = new FormData();
        body.append("model", "whisper");
        body.append("file", new Blob([bytes]), "upload");
        return fetch(`${server.baseUrl}/v1/audio/transcriptions`, {method: "POST", body, signal});
    };
    const busy = async () => ((await (await fetch(`${server.baseUrl}/health`)).json()) as {models: Record<string, {busy: number}>}).models.whisper.busy;
    try {
        // Warm-up: the WAV and FLAC decoders and the model loaded in both workers.
        for (const bytes of [await encodeFixture("wav", testSignal(2, 16_000), 16_000), await flacSilence(2)])
            for (let worker = 0; worker < 2; worker++)
                await (await send(bytes)).arrayBuffer();
        const uploads: [string, Uint8Array][] = [
            ["WAV, header says 1 Hz (1,044 B)", wavAtRate(1)],
            ["WAV, header says 1 Hz, 25 MB", wavAtRate(1, uploadLimitBytes - 44)],
            ["FLAC silence to 25 MB, STREAMINFO true (147 h)", await flacSilence(600, {scaleTo: uploadLimitBytes})],
            ["FLAC silence to 25 MB, STREAMINFO total 0", await flacSilence(600, {scaleTo: uploadLimitBytes, total: "unknown"})],
            ["FLAC silence to 25 MB, STREAMINFO says 600 s", await flacSilence(600, {scaleTo: uploadLimitBytes, total: "original"})]
        ];
        const idle = await pollLive(server.baseUrl, settle(3000));
        console.log(`\nAudio uploads (tiny Whisper, --max-audio-seconds 7200, 2 workers; at least ${runs} requests and 5 s each, one at a time). ` +
            `/health/live idle: median ${fixed(median(idle), 1)} ms, p99 ${fixed(percentile(idle, 0.99), 1)} ms, max ${fixed(Math.max(...idle), 1)} ms`);
        console.log(`\n| upload | answer | requests | ms each (median / max) | /health/live p99 | max | polls | RSS MiB before / peak / after / 30 s later |\n|---|---|---|---|---|---|---|---|`);
        for (const [name, bytes] of uploads) {
            await settle(2000);
            const before = server.memory().rssMiB;
            let peak = before;
            const sampler = setInterval(() => peak = Math.max(peak, server.memory().rssMiB), 50);
            const ms: number[] = [];
            let answer = "";
            const load = (async () => {
                for (const start = performance.now(); ms.length < runs || performance.now() - start < 5000;) {
                    const started = performance.now();
                    const response = await send(bytes);
                    const body = await response.json() as {error?: {message: string, code: string}};
                    ms.push(performance.now() - started);
                    answer = `${response.status} ${body.error?.code ?? ""}: ${body.error?.message ?? ""}`;
                }
            })();
            const polls = await pollLive(server.baseUrl, load);
            await load;
            clearInterval(sampler);
            const after = server.memory().rssMiB;
            await settle(30_000);
            console.log(`| ${name} | ${answer.slice(0, 100)} | ${ms.length} | ${fixed(median(ms), 0)} / ${fixed(Math.max(...ms), 0)} | ` +
                `${fixed(percentile(polls, 0.99), 0)} | ${fixed(Math.max(...polls), 0)} | ${polls.length} | ` +
                `${fixed(before, 0)} / ${fixed(peak, 0)} / ${fixed(after, 0)} / ${fixed(server.memory().rssMiB, 0)} |`);
        }
        // The hidden bomb again, its client leaving 200 ms after the model took it: how long until the worker is free.
        const freed: number[] = [];
        for (let run = 0; run < runs; run++) {
            const client = new AbortController();
            const request = send(uploads[3][1], client.signal).catch(() => null);
            while (await busy() === 0)
                await settle(5);
            await settle(200);
            const left = performance.now();
            client.abort();
            await request;
            while (await busy() !== 0)
                await settle(5);
            freed.push(performance.now() - left);
        }
        console.log(`\nA client leaving 200 ms into the STREAMINFO-0 bomb: the worker free after median ${fixed(median(freed), 0)} ms, max ${fixed(Math.max(...freed), 0)} ms (/health polled every 5 ms)`);
    } finally {
        await server.stop();
        fs.rmSync(dir, {recursive: true, force: true});
    }
}
