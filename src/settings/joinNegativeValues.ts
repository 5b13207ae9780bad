import type { ParseArgsConfig } from "node:util";

/**
 * The command line with a negative number after a flag that takes a value joined to it: `--keep-alive -1` becomes
 * `--keep-alive=-1`. node's parseArgs refuses a value that starts with a dash there ("argument is ambiguous"), in case
 * it is a flag; no flag of the server is a dash and digits, so such a word is the value. Past `--`, nothing is a flag.
 */
export function joinNegativeValues(args: readonly string[], options: NonNullable<ParseArgsConfig["options"]>): string[] {
    const joined: string[] = [];
    for (let index = 0; index < args.length; index++) {
        const arg = args[index];
        if (arg === "--") {
            joined.push(...args.slice(index));
            break;
        }
        const next = args[index + 1];
        if (arg.startsWith("--") && options[arg.slice(2)]?.type === "string" && next != null && /^-\d+(\.\d+)?$/.test(next)) {
            joined.push(`${arg}=${next}`);
            index++;
        } else
            joined.push(arg);
    }
    return joined;
}
