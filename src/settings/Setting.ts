/**
 * One setting of the server: where it is read from (a `--flag`, an environment variable, or both; a flag wins
 * over its variable, which wins over the default), how a given value is checked, and how `--help` and
 * docs/configuration.md describe it. A table of settings is an object of these keyed by the `Config` field
 * they fill; `SettingValues` is the type the table reads into.
 */
export type Setting<T> = {
    /** The flag without its dashes (`draft-max`); none = environment only. */
    flag?: string;
    /** The environment variable; none = flag only. */
    env?: string;
    /** The value's placeholder in `--help` (`<n>`); none for a switch. */
    arg?: string;
    /** A flag that takes no value (`--metrics-public`): given = true; its variable is read as a boolean. */
    switch?: boolean;
    /** Old names still read, with a warning (a flag and a variable, each below the new one). */
    deprecated?: {flag: string, env: string, reason: string};
    default: T;
    /** The default as `--help` and the docs show it, when not the value itself (`1/16 of RAM`). */
    shownDefault?: {help: string, docs: string};
    /** Checks a value given as text (trimmed when from the environment); throws a ConfigError naming the setting by `name`. */
    parse(raw: string, name: string): T;
    /** Applied to the value read or the default (relative paths made absolute). */
    resolve?: (value: T) => T;
    /** One line of `--help`. */
    help: string;
    /** Its row in docs/configuration.md (markdown), when more than the help line. */
    docs?: string;
};

/** Any table of settings. */
export type SettingsTable = Readonly<Record<string, Setting<any>>>;

/** What a table reads into: each setting's value under its key. */
export type SettingValues<Table extends SettingsTable> = {-readonly [Key in keyof Table]: Table[Key] extends Setting<infer T> ? T : never};

/** A setting given a value it does not take, an unknown flag, or a flag missing its value. */
export class ConfigError extends Error {}

/** How a setting is named in its errors: its flag (without dashes) where it has one, else its variable. */
export function nameOf(setting: Setting<unknown>) {
    return setting.flag ?? setting.env!;
}
