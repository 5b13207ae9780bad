import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { serverEnvironment } from "../serverEnvironment.js";

/** llama.cpp's llama-server as a child process on a free loopback port. */
export class LlamaServerProcess {
    private constructor(private readonly child: ChildProcess, readonly baseUrl: string, readonly commandLine: string, private readonly output: () => string) {}

    /** The server process's id (its CPU time: cpuAccounting's processCpuMs). */
    get pid(): number {
        return this.child.pid!;
    }

    /** The last 20 kB of its output. */
    get log() {
        return this.output();
    }

    static async start(binary: string, args: string[], timeoutMs = 300_000): Promise<LlamaServerProcess> {
        const port = await freePort();
        const fullArgs = [...args, "--host", "127.0.0.1", "--port", String(port)];
        const child = spawn(binary, fullArgs, {env: serverEnvironment(), stdio: ["ignore", "pipe", "pipe"]});
        process.on("exit", () => child.kill("SIGKILL"));
        let output = "";
        child.stdout!.setEncoding("utf8").on("data", (text: string) => output = (output + text).slice(-20_000));
        child.stderr!.setEncoding("utf8").on("data", (text: string) => output = (output + text).slice(-20_000));
        const baseUrl = `http://127.0.0.1:${port}`;
        const started = Date.now();
        for (;;) {
            if (child.exitCode != null)
                throw new Error(`llama-server exited with code ${child.exitCode}:\n${output}`);
            const response = await fetch(`${baseUrl}/health`, {signal: AbortSignal.timeout(2000)}).catch(() => null);
            await response?.body?.cancel();
            if (response?.status === 200)
                return new LlamaServerProcess(child, baseUrl, [binary, ...fullArgs].join(" "), () => output);
            if (Date.now() - started > timeoutMs) {
                child.kill("SIGKILL");
                throw new Error(`llama-server did not become ready:\n${output}`);
            }
            await new Promise((resolve) => setTimeout(resolve, 100));
        }
    }

    async stop() {
        if (this.child.exitCode != null || this.child.signalCode != null)
            return;
        const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
        this.child.kill("SIGTERM");
        const timer = setTimeout(() => this.child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(timer);
    }
}

function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const server = net.createServer();
        server.once("error", reject);
        server.listen(0, "127.0.0.1", () => {
            const {port} = server.address() as net.AddressInfo;
            server.close(() => resolve(port));
        });
    });
}
