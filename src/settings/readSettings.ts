import type { ParseArgsConfig } from "node:util";
import { ConfigError, nameOf, type SettingValues, type SettingsTable } from "./Setting.js";

/** The command-line options of a table's flags (and their deprecated names), for node's parseArgs. */
export function flagOptions(table: SettingsTable): NonNullable<ParseArgsConfig["options"]> {
    return Object.fromEntries(Object.values(table).flatMap((setting) => [setting.flag, setting.deprecated?.flag]
        .filter((flag) => flag != null)
        .map((flag) => [flag, {type: setting.switch === true ? "boolean" as const : "string" as const}])));
}

/**
 * Reads every setting of `table`: its flag from `flags` (parseArgs' values), else its environment variable
 * (blank = not set, trimmed), else its default. `warnings` collects the deprecated names that were used.
 */
export function readSettings<Table extends SettingsTable>(table: Table, flags: Readonly<Record<string, unknown>>,
    env: NodeJS.ProcessEnv, warnings: string[] = []): SettingValues<Table> {
    const values: Record<string, unknown> = {};
    for (const [key, setting] of Object.entries(table)) {
        const {flag, env: variable, deprecated} = setting;
        if (deprecated != null && flags[deprecated.flag] != null)
            warnings.push(`--${deprecated.flag} is deprecated: ${deprecated.reason}; use --${flag}.`);
        if (deprecated != null && nonEmpty(env[deprecated.env]) != null)
            warnings.push(`${deprecated.env} is deprecated: ${deprecated.reason}; use ${variable}.`);
        const given = flag == null ? undefined : (flags[flag] ?? (deprecated == null ? undefined : flags[deprecated.flag])) as string | true | undefined;
        if (typeof given === "string" && given.trim() === "")
            throw new ConfigError(`--${flag} needs a value`);
        let value;
        if (given === true)
            value = true;
        else {
            const raw = given ?? (variable == null ? undefined : nonEmpty(env[variable])) ?? (deprecated == null ? undefined : nonEmpty(env[deprecated.env]));
            // A switch's variable is the only place it can be given a wrong value: its errors name the variable.
            value = raw == null ? setting.default : setting.parse(raw, setting.switch === true ? variable! : nameOf(setting));
        }
        values[key] = setting.resolve == null ? value : setting.resolve(value);
    }
    return values as SettingValues<Table>;
}

/** The defaults of a table, as they are before `resolve`. */
export function defaultsOf<Table extends SettingsTable>(table: Table): SettingValues<Table> {
    return Object.fromEntries(Object.entries(table).map(([key, setting]) => [key, setting.default])) as SettingValues<Table>;
}

function nonEmpty(value: string | undefined) {
    return value == null || value.trim() === "" ? undefined : value.trim();
}
