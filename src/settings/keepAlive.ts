import { ConfigError, type Setting } from "./Setting.js";

/**
 * A keep-alive as the manifest (`keepAlive`) and `--keep-alive` write it, in milliseconds; null = forever.
 * Accepted: `forever` (or `-1`, Ollama's spelling), a number of seconds (`0` = unload as soon as the
 * model is idle), or a duration with a unit (`500ms`, `30s`, `5m`, `2h`). Returns undefined when it is none of these.
 */
export function parseKeepAlive(value: string | number): number | null | undefined {
    if (typeof value === "number")
        return value === -1 ? null : Number.isInteger(value) && value >= 0 ? value * 1000 : undefined;
    const text = value.trim().toLowerCase();
    if (text === "forever" || text === "-1")
        return null;
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text);
    if (match == null)
        return undefined;
    const unit = {ms: 1, s: 1000, m: 60_000, h: 3_600_000}[(match[2] ?? "s") as "ms" | "s" | "m" | "h"];
    return Math.round(Number(match[1]) * unit);
}

/** A keep-alive in milliseconds (null = forever) as a person writes it: `forever`, `0s`, `90s`, `5m`, `2h`. */
export function formatKeepAlive(ms: number | null): string {
    if (ms == null)
        return "forever";
    if (ms % 3_600_000 === 0 && ms > 0)
        return `${ms / 3_600_000}h`;
    if (ms % 60_000 === 0 && ms > 0)
        return `${ms / 60_000}m`;
    return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** A keep-alive setting (see parseKeepAlive), read as seconds (so its default reads back as itself); null = forever. */
export function keepAlive(options: Omit<Setting<never>, "default" | "parse" | "resolve" | "switch"> & {default: number | null}): Setting<number | null> {
    return {
        ...options,
        parse(raw, name) {
            const ms = parseKeepAlive(raw);
            if (ms === undefined)
                throw new ConfigError(`${name} must be "forever", a number of seconds, or a duration such as 30s, 5m or 2h; got "${raw}"`);
            return ms == null ? null : ms / 1000;
        }
    };
}
