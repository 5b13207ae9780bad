import { ConfigError, type Setting } from "./Setting.js";

/** What every kind of setting is told besides its own bounds: names, help, and the default where the kind has none. */
type Described = Omit<Setting<never>, "default" | "parse" | "resolve" | "switch">;

/** Whole numbers from `min` to `max`, plain decimal digits only (`Number()` would also take "", "0x1F90" and "1e3"). */
export function integer(options: Described & {default: number, min: number, max: number}): Setting<number> & {min: number, max: number} {
    return {...options, parse: (raw, name) => integerFrom(raw, name, options.min, options.max)};
}

export function integerFrom(raw: string, name: string, min: number, max: number) {
    const value = /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isInteger(value) || value < min || value > max)
        throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    return value;
}

/** A probability: a decimal number from 0 to 1 (`0.75`, `1`, `.5`). */
export function probability(options: Described & {default: number}): Setting<number> & {min: number, max: number} {
    return {
        ...options, min: 0, max: 1,
        parse(raw, name) {
            const value = /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(raw.trim()) ? Number(raw) : Number.NaN;
            if (!(value >= 0 && value <= 1))
                throw new ConfigError(`${name} must be a probability from 0 to 1, got "${raw}"`);
            return value;
        }
    };
}

/** One of a few words, any case unless `caseSensitive`. */
export function oneOf<const T extends string>(allowed: readonly T[], options: Described & {default: NoInfer<T>, caseSensitive?: boolean}): Setting<T> & {allowed: readonly T[]} {
    return {
        ...options,
        allowed,
        parse(raw, name) {
            const value = options.caseSensitive === true ? raw : raw.toLowerCase();
            if (!(allowed as readonly string[]).includes(value))
                throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, got "${raw}"`);
            return value as T;
        }
    };
}

/** Any text; `parse` may reshape it. */
export function text<T extends string | null = string>(options: Described & {default: NoInfer<T>, parse?: (raw: string) => T, resolve?: (value: T) => T}): Setting<T> {
    return {...options, parse: options.parse ?? ((raw) => raw as T)};
}

/** A comma-separated list, entries trimmed, empty ones dropped. */
export function list(options: Described & {default: string[], lowercase?: boolean}): Setting<string[]> {
    return {
        ...options,
        parse: (raw) => raw.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
            .map((entry) => options.lowercase === true ? entry.toLowerCase() : entry)
    };
}

/** A flag without a value (off unless given); its variable takes 1/0, true/false, yes/no, on/off. */
export function onOff(options: Described): Setting<boolean> {
    return {...options, switch: true, default: false, parse: booleanFrom};
}

function booleanFrom(raw: string, name: string) {
    if (/^(1|true|yes|on)$/i.test(raw))
        return true;
    if (/^(0|false|no|off)$/i.test(raw))
        return false;
    throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** A size (`512mb`, `2gb`, `2048` bytes), at least 1 KB, read as bytes. */
export function byteSize(options: Described & {default: number}): Setting<number> {
    return {
        ...options,
        parse(raw, name) {
            const bytes = parseByteSize(raw);
            if (bytes == null || bytes < 1024)
                throw new ConfigError(`${name} must be a size of at least 1kb such as 512mb or 2gb, got "${raw}"`);
            return bytes;
        }
    };
}

/** "10mb", "512kb", "1.5gb", "2048" (bytes) as bytes (1 mb = 1024 * 1024, as the body parser reads it); null when it is not one. */
export function parseByteSize(text: string): number | null {
    const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(text);
    if (match == null)
        return null;
    const unit = {b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3}[(match[2] ?? "b").toLowerCase() as "b" | "kb" | "mb" | "gb"];
    return Math.floor(Number(match[1]) * unit);
}

/** An http(s) base URL, kept without its trailing slashes; errors name the flag with its dashes, as it is typed, and show `example`. */
export function httpUrl<T extends string | null>(options: Described & {default: T, example: string}): Setting<string | T> {
    return {
        ...options,
        parse(raw) {
            let url: URL | null = null;
            try {
                url = new URL(raw);
            } catch {
                // reported below
            }
            if (url == null || (url.protocol !== "http:" && url.protocol !== "https:"))
                throw new ConfigError(`${options.flag != null ? `--${options.flag}` : options.env} must be an http(s) URL such as ${options.example}, got "${raw}"`);
            return raw.replace(/\/+$/, "");
        }
    };
}
