import { formatBytes } from "./formatBytes.js";

/** What reports a download's progress, one file at a time (the terminal's DownloadProgress, the management API's events). */
export type FileProgress = Pick<DownloadProgress, "start" | "advance" | "done" | "note" | "stop">;

/** Where progress goes: process.stdout, or a test's collector. */
export type ProgressOutput = {write(text: string): unknown; isTTY?: boolean; columns?: number};

/**
 * Progress of one file at a time. On a terminal: one line redrawn in place (bar, bytes, %, speed,
 * ETA), left as a summary when done. Elsewhere (CI logs, pipes): a line at the start, one per 10%
 * and one at the end, so a log stays short but still shows that something is moving.
 */
export class DownloadProgress {
    private label = "";
    private total: number | null = null;
    private resumedFrom = 0;
    private received = 0;
    private startedAt = 0;
    private lastDraw = 0;
    private lastTenth = 0;
    /** A TTY line is drawn and not yet ended. */
    private active = false;

    constructor(private readonly out: ProgressOutput, private readonly now: () => number = () => performance.now()) {}

    /** `resumedFrom` bytes were already on disk (a resumed `.part`); speed counts only new bytes. */
    start(label: string, total: number | null, resumedFrom: number) {
        Object.assign(this, {label, total, resumedFrom, received: 0, startedAt: this.now(), lastDraw: 0});
        this.lastTenth = this.tenth();
        if (this.out.isTTY)
            this.draw();
        else
            this.out.write(`${label}: ${resumedFrom > 0 ? `resuming at ${formatBytes(resumedFrom)} of` : "downloading"} ${total == null ? "(size unknown)" : formatBytes(total)}\n`);
    }

    /** `bytes` more arrived. */
    advance(bytes: number) {
        this.received += bytes;
        if (this.out.isTTY) {
            if (this.now() - this.lastDraw >= 100)
                this.draw();
            return;
        }
        const tenth = this.tenth();
        if (tenth > this.lastTenth && tenth < 10) {
            this.lastTenth = tenth;
            this.out.write(`${this.label}: ${tenth * 10}% (${this.stats()})\n`);
        }
    }

    /** The file is complete; `note` says how it was verified. */
    done(note: string) {
        const seconds = (this.now() - this.startedAt) / 1000;
        this.active = false;
        const line = `${this.label}: done, ${formatBytes(this.resumedFrom + this.received)} in ${seconds.toFixed(1)}s (${formatBytes(this.speed())}/s), ${note}`;
        this.out.write(this.out.isTTY ? `\r\x1b[2K${line}\n` : `${line}\n`);
    }

    /** A message of its own between progress lines (a resume, a retry). */
    note(message: string) {
        this.active = false;
        this.out.write(this.out.isTTY ? `\r\x1b[2K${message}\n` : `${message}\n`);
    }

    /** Ends the in-place line so an error message starts on a line of its own. */
    stop() {
        if (this.active)
            this.out.write("\n");
        this.active = false;
    }

    private tenth() {
        return this.total == null || this.total === 0 ? 0 : Math.floor(((this.resumedFrom + this.received) / this.total) * 10);
    }

    private speed() {
        const seconds = (this.now() - this.startedAt) / 1000;
        return seconds > 0 ? this.received / seconds : 0;
    }

    private stats() {
        const done = this.resumedFrom + this.received;
        const speed = this.speed();
        const eta = this.total != null && speed > 0 ? `, ETA ${clock((this.total - done) / speed)}` : "";
        return `${formatBytes(done)}${this.total == null ? "" : ` of ${formatBytes(this.total)}`}, ${formatBytes(speed)}/s${eta}`;
    }

    private draw() {
        this.active = true;
        this.lastDraw = this.now();
        const done = this.resumedFrom + this.received;
        const fraction = this.total == null || this.total === 0 ? null : Math.min(1, done / this.total);
        const width = 20;
        const bar = fraction == null ? "" : `[${"#".repeat(Math.round(fraction * width)).padEnd(width, "-")}] ${(fraction * 100).toFixed(0).padStart(3)}% `;
        const tail = `${bar}${this.stats()}`;
        const room = (this.out.columns || 100) - tail.length - 3;  // a pty may report 0 columns
        const label = this.label.length <= room ? this.label : `…${this.label.slice(-Math.max(room - 1, 8))}`;
        this.out.write(`\r\x1b[2K${label}  ${tail}`);
    }
}

/** Seconds as `m:ss` or `h:mm:ss`. */
function clock(seconds: number) {
    const s = Math.max(0, Math.round(seconds));
    const parts = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
    const text = parts.map((part) => String(part).padStart(2, "0")).join(":");
    return parts[0] > 0 ? text.replace(/^0/, "") : text.slice(3).replace(/^0/, "");
}
