import { ConfigError, type Setting } from "./Setting.js";

/**
 * A keep-alive as the manifest (`keepAlive`) and `--keep-alive` write it, in milliseconds; null = forever.
 * Accepted: `forever` (or `-1`, Ollama's spelling), a number of seconds, as a JSON number or as text (`0` = unload
 * as soon as the model is idle, `1.5`), or a duration with a unit (`500ms`, `30s`, `5m`, `2h`), of any length (the
 * library's timers take weeks). Returns undefined when it is none of these.
 */
export function parseKeepAlive(value: string | number): number | null | undefined {
    if (typeof value === "number")
        return value === -1 ? null : inMs(value, 1000);
    const text = value.trim().toLowerCase();
    if (text === "forever" || text === "-1")
        return null;
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text);
    if (match == null)
        return undefined;
    return inMs(Number(match[1]), {ms: 1, s: 1000, m: 60_000, h: 3_600_000}[(match[2] ?? "s") as "ms" | "s" | "m" | "h"]);
}

/** `amount` units in whole milliseconds; undefined for a negative one, or one too large to be a number. */
function inMs(amount: number, unit: number): number | undefined {
    const ms = Math.round(amount * unit);
    return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
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

/**
 * The keep-alive of a model given none (neither its manifest entry's `keepAlive` nor `--keep-alive`), unless it is
 * preloaded (then forever): 5 minutes. As Ollama: a desktop user switching models gets the memory back within minutes,
 * a conversation stays warm.
 */
export const defaultKeepAliveMs = 300_000;

/**
 * The keep-alive setting (see parseKeepAlive), read as seconds; null = forever; undefined = not given: a model then
 * gets defaultKeepAliveMs, a preloaded one forever. Given, it wins over that forever (`--preload-all --keep-alive 10m`).
 */
export function keepAlive(options: Omit<Setting<never>, "default" | "shownDefault" | "parse" | "resolve" | "switch">): Setting<number | null | undefined> {
    const shown = formatKeepAlive(defaultKeepAliveMs);
    return {
        ...options,
        default: undefined,
        shownDefault: {help: shown, docs: `\`${shown}\`; a preloaded model: \`forever\``},
        parse(raw, name) {
            const ms = parseKeepAlive(raw);
            if (ms === undefined)
                throw new ConfigError(`${name} must be "forever", a number of seconds, or a duration such as 30s, 5m or 2h; got "${raw}"`);
            return ms == null ? null : ms / 1000;
        }
    };
}
