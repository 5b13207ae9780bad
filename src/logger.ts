import type { LogLevel } from "./settings/serverSettings.js";

export type Logger = {
    error(message: string, fields?: Record<string, unknown>): void;
    warn(message: string, fields?: Record<string, unknown>): void;
    info(message: string, fields?: Record<string, unknown>): void;
    debug(message: string, fields?: Record<string, unknown>): void;
};

const rank: Record<LogLevel, number> = {silent: 0, error: 1, warn: 2, info: 3, debug: 4};

/**
 * Human-readable lines on stderr (stdout stays free for the startup banner and CLI output).
 * Fields are appended as `key=value` so a line stays greppable.
 */
export function createLogger(level: LogLevel, write: (line: string) => void = (line) => process.stderr.write(line + "\n")): Logger {
    const log = (at: Exclude<LogLevel, "silent">) => (message: string, fields?: Record<string, unknown>) => {
        if (rank[at] > rank[level])
            return;
        const suffix = fields == null
            ? ""
            : Object.entries(fields)
                .filter(([, value]) => value !== undefined)
                .map(([key, value]) => ` ${key}=${typeof value === "string" ? JSON.stringify(value) : String(value)}`)
                .join("");
        write(`${new Date().toISOString()} ${at.toUpperCase()} ${message}${suffix}`);
    };
    return {error: log("error"), warn: log("warn"), info: log("info"), debug: log("debug")};
}

/** Longest client-sent text a log line carries per field (as chat's `user` is bounded by its schema). */
export const maxLogTextLength = 512;

/**
 * Client-sent text as a log line (or an error message) may carry it: at most `max` characters, the
 * rest named by its length (`alice... (9437184 characters)`), so a 9 MB `user` never makes a 9 MB log
 * line. A surrogate pair is never cut in half.
 */
export function clipLogText(text: string, max = maxLogTextLength): string {
    if (text.length <= max)
        return text;
    const end = /[\uD800-\uDBFF]/.test(text[max - 1]) ? max - 1 : max;
    return `${text.slice(0, end)}... (${text.length} characters)`;
}
