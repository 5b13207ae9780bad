/**
 * The stalled-uploads case of `npm run bench:security`: `connections` clients each start a 9.5 MB chat
 * request, send 9 MB of it and then nothing (a slow-loris on bodies, held until the body timeout, 30 s).
 * Run twice, against a server process whose --max-body-memory is 256 MB and one without a cap in
 * practice (64 GB, as before the cap existed). Prints the server's RSS before and while they stall, what
 * the server says it holds (/metrics), and how many were refused with 503.
 * Figures: docs/security.md ("Request bodies in memory").
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { BenchServer } from "./serverClient.js";

const connections = 64;
const declaredBytes = 9.5 * 1024 * 1024;
const sentBytes = 9 * 1024 * 1024;

function rssMegabytes(pid: number) {
    const kilobytes = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
    return kilobytes / 1024;
}

async function heldBytes(baseUrl: string) {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    return Number(/^los_request_body_memory_bytes (\d+)$/m.exec(text)?.[1]);
}

/** Opens one stalled request: its head and `sentBytes` of its body; resolves its answer's status if one comes (a refusal). */
function stall(baseUrl: string, body: Buffer, answers: number[]) {
    const {hostname, port, host} = new URL(baseUrl);
    const socket = net.connect(Number(port), hostname);
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => {
        const status = /^HTTP\/1\.1 (\d+)/.exec(chunk.toString("latin1"))?.[1];
        if (status != null)
            answers.push(Number(status));
    });
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${declaredBytes}\r\n\r\n`);
    socket.write(body);
    return socket;
}

async function runOnce(root: string, manifestPath: string, keysFile: string, cap: string) {
    const server = await BenchServer.start({cwd: root, manifestPath, keysFile, threads: 1, parallel: 2, startTimeoutMs: 60_000, extraArgs: ["--max-body-memory", cap]});
    try {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const idle = rssMegabytes(server.pid);
        const body = Buffer.from(`{"model":"stories","messages":[{"role":"user","content":"${"x".repeat(sentBytes - 50)}`);
        const answers: number[] = [];
        const sockets = Array.from({length: connections}, () => stall(server.baseUrl, body, answers));
        // Settled: what the server holds stops changing (every byte sent was read, or refused).
        let last = -1;
        for (let same = 0; same < 4;) {
            await new Promise((resolve) => setTimeout(resolve, 500));
            const now = await heldBytes(server.baseUrl);
            same = now === last ? same + 1 : 0;
            last = now;
        }
        const stalled = rssMegabytes(server.pid);
        for (const socket of sockets)
            socket.destroy();
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const after = await heldBytes(server.baseUrl);
        console.log(`  --max-body-memory ${cap}: RSS ${idle.toFixed(0)} MB idle, ${stalled.toFixed(0)} MB with ${connections} stalled 9 MB bodies ` +
            `(+${(stalled - idle).toFixed(0)} MB); the server held ${(last / 1024 / 1024).toFixed(0)} MB of bodies; ` +
            `${answers.filter((status) => status === 503).length} refused with 503; ${(after / 1024 / 1024).toFixed(0)} MB held once they left`);
    } finally {
        await server.stop();
    }
}

/** Both runs, on stories260K (the demo model; the bodies never reach it). */
export async function stalledUploadsCase(root: string) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "los-bench-stalled-"));
    const manifestPath = path.join(tmp, "models.json");
    fs.writeFileSync(manifestPath, JSON.stringify({models: [{id: "stories", task: "chat", path: path.join(root, "models/demo/stories260K.gguf")}]}));
    try {
        console.log(`Stalled uploads: ${connections} connections, each sending 9 MB of a 9.5 MB chat request, then nothing:`);
        await runOnce(root, manifestPath, path.join(tmp, "no-keys.json"), "64gb");
        await runOnce(root, manifestPath, path.join(tmp, "no-keys.json"), "256mb");
    } finally {
        fs.rmSync(tmp, {recursive: true, force: true});
    }
}
