import { fork, type ChildProcess } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";

/**
 * `/health/live` polled every 10 ms from a process of its own, at the normal priority, while the bench's own process
 * (which builds and sends the heavy requests) runs below it (`--client-nice`, default 10, as the server's preparation
 * threads). On a 2-core machine the bench's sending competes with the server for the cores; an attacker's client runs on
 * another machine, and a poll delayed by the bench's own work would measure the bench, not the server. Each `poll`
 * returns the latencies of the polls made until `until` settles (a poll still waiting then counts with the time it
 * waited so far: a lower bound).
 */
export class LivePoller {
    private constructor(private readonly child: ChildProcess) {}

    /** Starts the poller process, then lowers the calling (main) thread's priority to `clientNice` (Linux; 0 leaves it). */
    static async start(clientNice: number): Promise<LivePoller> {
        const child = fork(pollerScript, {execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"], env: process.env});
        await new Promise<void>((resolve, reject) => {
            child.once("message", () => resolve());
            child.once("error", reject);
        });
        if (clientNice > 0 && process.platform === "linux")
            os.setPriority(process.pid, Math.max(os.getPriority(process.pid), clientNice));
        return new LivePoller(child);
    }

    async poll(baseUrl: string, until: Promise<unknown>): Promise<number[]> {
        this.child.send({start: baseUrl});
        await until.catch(() => {});
        const latencies = new Promise<number[]>((resolve) => this.child.once("message", (message) => resolve(message as number[])));
        this.child.send({stop: true});
        return latencies;
    }

    stop(): void {
        this.child.disconnect();
    }
}

/** The poller process (plain JavaScript, run by `node` itself: no loader to start). */
const pollerScript = fileURLToPath(new URL("./livePollerProcess.mjs", import.meta.url));
