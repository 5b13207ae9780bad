import { execFileSync } from "node:child_process";
import fs from "node:fs";

/** Clock ticks per second of /proc times (almost always 100). */
const ticksPerSecond = (() => {
    try {
        return Number(execFileSync("getconf", ["CLK_TCK"], {encoding: "utf8"}).trim()) || 100;
    } catch {
        return 100;
    }
})();

/** CPU time (user + system, all threads) a process has used so far, in ms. */
export function processCpuMs(pid: number | "self"): number {
    // The command name (field 2) may contain spaces; the fields after it are space-separated.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of the whole line, so 11 and 12 after the name.
    return (Number(fields[11]) + Number(fields[12])) * 1000 / ticksPerSecond;
}

/** CPU time the whole machine has spent busy (not idle or waiting for I/O), in ms summed over cores. */
export function systemBusyMs(): number {
    const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0];
    const [, ...values] = line.trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal ...
    const [user, nice, system, , , irq, softirq, steal] = values;
    return (user + nice + system + irq + softirq + (steal ?? 0)) * 1000 / ticksPerSecond;
}

/**
 * Where the CPU went while a side of the bench ran: the bench process itself (raw: generation +
 * llama.cpp; server side: the HTTP client), the server child if any, and everything else on the
 * machine (other people's tests would show up here and make the figures unreliable).
 */
export class CpuMeter {
    private readonly startWall = performance.now();
    private readonly startSelf = processCpuMs("self");
    private readonly startChild: number;
    private readonly startSystem = systemBusyMs();

    constructor(private readonly childPid?: number) {
        this.startChild = childPid == null ? 0 : processCpuMs(childPid);
    }

    stop(): CpuReport {
        const wallMs = performance.now() - this.startWall;
        const selfMs = processCpuMs("self") - this.startSelf;
        const childMs = this.childPid == null ? 0 : processCpuMs(this.childPid) - this.startChild;
        const systemMs = systemBusyMs() - this.startSystem;
        return {wallMs, selfMs, childMs, othersMs: Math.max(0, systemMs - selfMs - childMs)};
    }
}

export type CpuReport = {wallMs: number, selfMs: number, childMs: number, othersMs: number};

/**
 * Waits (at most `maxSeconds`, in 1 s samples) until processes other than this one use less than
 * `maxCores` of CPU, so other people's test runs do not skew a side of the bench. Returns the
 * last sample's load from others, in cores; the caller proceeds (with a warning) if it never settled.
 */
export async function waitForIdleMachine(maxSeconds: number, maxCores = 0.15): Promise<number> {
    let others = NaN;
    for (let second = 0; second < maxSeconds; second++) {
        const meter = new CpuMeter();
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const report = meter.stop();
        others = report.othersMs / report.wallMs;
        if (others < maxCores)
            return others;
    }
    return others;
}
