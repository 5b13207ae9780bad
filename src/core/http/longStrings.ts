/** A string of a parsed value sent apart, in `pieces` pieces: where it goes in the value. */
export type LongString = {path: (string | number)[], pieces: number};

/** Strings this long or longer cross between threads in pieces of this many characters (about 1.5 ms of fresh memory each here). */
export const longStringChars = 256 * 1024;

/**
 * Takes the long strings out of a parsed JSON value (left `""` in place), each cut in pieces of `longStringChars`:
 * where they were, and all their pieces in order. The value's depth is bounded already (findJsonHazard), so the walk
 * keeps an explicit stack only to stay iterative.
 */
export function takeLongStrings(value: unknown): {strings: LongString[], pieces: string[]} {
    const strings: LongString[] = [];
    const pieces: string[] = [];
    const stack: {node: Record<string | number, unknown>, path: (string | number)[]}[] = [];
    if (value !== null && typeof value === "object")
        stack.push({node: value as Record<string, unknown>, path: []});
    while (stack.length > 0) {
        const {node, path} = stack.pop()!;
        for (const key of Array.isArray(node) ? node.keys() : Object.keys(node)) {
            const child = node[key];
            if (typeof child === "string" && child.length >= longStringChars) {
                let count = 0;
                for (let start = 0; start < child.length; start += longStringChars, count++)
                    pieces.push(child.slice(start, start + longStringChars));
                strings.push({path: [...path, key], pieces: count});
                node[key] = "";
            } else if (child !== null && typeof child === "object")
                stack.push({node: child as Record<string, unknown>, path: [...path, key]});
        }
    }
    return {strings, pieces};
}

/**
 * Puts long strings back into a value, each the concatenation of its pieces: a concatenation V8 keeps as a rope of
 * the pieces, not one fresh flat copy (which it makes only when the string is read character by character).
 */
export function putLongStrings(value: unknown, strings: readonly LongString[], pieces: readonly string[]): void {
    let next = 0;
    for (const {path, pieces: count} of strings) {
        let text = "";
        for (let index = 0; index < count; index++)
            text += pieces[next++];
        let node = value as Record<string | number, unknown>;
        for (const key of path.slice(0, -1))
            node = node[key] as Record<string | number, unknown>;
        node[path.at(-1)!] = text;
    }
}
