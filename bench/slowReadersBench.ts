/**
 * `npm run bench:slow-readers`: memory under readers that never read. The server (a child process,
 * the generated tiny Kokoro-shaped speech model, WRITE_TIMEOUT_MS=5000) gets 40 connections that each
 * ask for a long non-streamed WAV and never read a byte. Prints the server's RSS before, at its peak,
 * and once the write timeout has cut the connections (the clients still hold them open), and how
 * many connections the server still has. Figures: docs/security.md ("Resource limits").
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { makeTestKokoroOnnx } from "../test/support/onnx/makeTestKokoroOnnx.js";
import { BenchServer } from "./serverClient.js";

const readers = 40;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "los-bench-slow-readers-"));
const rssMb = (pid: number) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

makeTestKokoroOnnx(path.join(tmp, "kokoro"));
const manifestPath = path.join(tmp, "models.json");
fs.writeFileSync(manifestPath, JSON.stringify({models: [{id: "tts", task: "speech", path: path.join(tmp, "kokoro")}]}));
process.env.WRITE_TIMEOUT_MS = "5000";
process.env.QUEUE_SIZE = String(readers);
const server = await BenchServer.start({cwd: root, manifestPath, keysFile: path.join(tmp, "no-keys.json"), threads: 1, parallel: 4, startTimeoutMs: 60_000});
const sockets: net.Socket[] = [];
try {
    const input = "This sentence is read aloud for the memory test of the server. ".repeat(60);
    const probe = await fetch(`${server.baseUrl}/v1/audio/speech`, {method: "POST", headers: {"Content-Type": "application/json"},
        body: JSON.stringify({model: "tts", input, voice: "af_heart", response_format: "wav"})});
    const wavBytes = (await probe.arrayBuffer()).byteLength;
    const before = rssMb(server.pid);
    const body = JSON.stringify({model: "tts", input, voice: "af_heart", response_format: "wav"});
    const {port} = new URL(server.baseUrl);
    console.log(`${readers} readers that never read, each asking for a ${(wavBytes / 1024 / 1024).toFixed(1)} MB WAV (stream: false), WRITE_TIMEOUT_MS=5000; three waves, each after the last was cut:`);
    console.log(`server RSS before: ${before} MB`);
    for (let wave = 1; wave <= 3; wave++) {
        const wavesSockets: net.Socket[] = [];
        for (let index = 0; index < readers; index++) {
            const socket = net.connect(Number(port), "127.0.0.1", () => {
                socket.write(`POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
                socket.pause();
            });
            socket.on("error", () => {});
            wavesSockets.push(socket);
            sockets.push(socket);
        }
        let peak = 0;
        const started = performance.now();
        let cutAfter = 0;
        while (performance.now() - started < 180_000) {
            await sleep(250);
            peak = Math.max(peak, rssMb(server.pid));
            const health = await (await fetch(`${server.baseUrl}/health`)).json() as {models: Record<string, {busy: number, waiting: number}>};
            // Every request answered (its WAV written to a socket nobody reads), then the write timeout's worth and a margin.
            if (health.models.tts.busy === 0 && health.models.tts.waiting === 0) {
                await sleep(6500);
                cutAfter = rssMb(server.pid);
                break;
            }
        }
        console.log(`wave ${wave}: peak ${peak} MB, after the cut ${cutAfter} MB (the ${readers} clients still connected, not reading)`);
    }
} finally {
    for (const socket of sockets)
        socket.destroy();
    await server.stop();
    fs.rmSync(tmp, {recursive: true, force: true});
}
