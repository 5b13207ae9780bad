import type { Setting } from "./Setting.js";

/** Lines of `--help` for these settings (one per setting, one more per deprecated name), in their order. */
export function helpLines(settings: readonly Setting<unknown>[]): string[] {
    return settings.flatMap((setting) => [
        helpLine(setting.flag == null ? "" : `--${setting.flag}${setting.arg == null ? "" : ` ${setting.arg}`}`, setting.env ?? "", shownDefault(setting, "help"), setting.help),
        ...setting.deprecated == null ? [] : [helpLine(`--${setting.deprecated.flag}${setting.arg == null ? "" : ` ${setting.arg}`}`,
            setting.deprecated.env, "", `deprecated names of --${setting.flag} / ${setting.env}`)]
    ]);
}

/** Flag, variable, default, meaning: a default too long for its column puts the meaning on the next line. */
export function helpLine(flag: string, env: string, shown: string, help: string) {
    const start = `  ${flag.padEnd(24)} ${env.padEnd(21)} `;
    return shown.length > 13 ? `${start}${shown}\n${" ".repeat(start.length + 15)}${help}` : `${start}${shown.padEnd(14)} ${help}`;
}

/** docs/configuration.md's table of these settings (markdown), in their order; a number's bounds follow its default. */
export function docsTable(settings: readonly Setting<unknown>[]): string {
    const code = (name: string | undefined) => name == null ? "" : `\`${name}\``;
    return ["| flag | env | default (range) | meaning |", "|---|---|---|---|",
        ...settings.map((setting) =>
            `| ${code(setting.flag == null ? undefined : `--${setting.flag}`)} | ${code(setting.env)} | ${shownDefault(setting, "docs")}${bounds(setting)} | ${setting.docs ?? setting.help} |`)
    ].join("\n");
}

function bounds(setting: Setting<unknown> & {min?: number, max?: number}) {
    return setting.min == null || setting.max == null ? "" : ` (${setting.min}-${setting.max})`;
}

/** The default as shown: `off` for a switch, `(none)` in --help (nothing in the docs) for none, lists comma-separated. */
function shownDefault(setting: Setting<unknown>, where: "help" | "docs") {
    if (setting.shownDefault != null)
        return setting.shownDefault[where];
    if (setting.switch === true)
        return "off";
    const value = setting.default;
    if (value == null || (Array.isArray(value) && value.length === 0))
        return where === "help" ? "(none)" : "";
    const text = Array.isArray(value) ? value.join(",") : String(value);
    return where === "help" ? text : `\`${text}\``;
}
