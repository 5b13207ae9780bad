/**
 * Long strings of a value moved between threads as bytes, not cloned. A structured clone rebuilds each string in the
 * receiving thread's heap: for a 10 MB string that is 10 MB of fresh memory touched on the main thread, 40-140 ms of it
 * on a VM where page faults are slow (the 9.9 MB prompt of `npm run bench:security`). Moved as a transferred buffer (its
 * pages already touched by the sending thread) and made a string again with Buffer's `latin1`/`utf16le` decoding, which
 * Node copies into an external string (malloc'd: huge pages where the allocator uses them), the same string costs the
 * main thread 5-15 ms.
 */

/** A long string taken out of a value: where it was (keys from the root; [] for the root itself) and its bytes. */
export type MovedString = {path: (string | number)[], encoding: "latin1" | "utf16le", bytes: ArrayBuffer};

/** Strings this long (in UTF-16 code units) or longer are moved as bytes. */
export const movedStringLength = 512 * 1024;
const beyondLatin1 = /[^\u0000-\u00ff]/;

/**
 * Takes the long strings out of a JSON value (in the sending thread): each is replaced by "" in place and returned as
 * bytes, with the buffers to transfer. A root that is itself a long string becomes "".
 */
export function takeLongStrings(value: unknown, minLength = movedStringLength): {value: unknown, strings: MovedString[], transfer: ArrayBuffer[]} {
    const strings: MovedString[] = [];
    const take = (text: string, path: (string | number)[]) => {
        const encoding = beyondLatin1.test(text) ? "utf16le" : "latin1";
        const buffer = Buffer.from(text, encoding);
        // Node may place a small Buffer in a shared pool; these are never small, but copy if the view is not its whole buffer.
        const bytes = buffer.byteOffset === 0 && buffer.byteLength === buffer.buffer.byteLength
            ? buffer.buffer as ArrayBuffer : buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;
        strings.push({path, encoding, bytes});
    };
    if (typeof value === "string") {
        if (value.length < minLength)
            return {value, strings, transfer: []};
        take(value, []);
        return {value: "", strings, transfer: strings.map(({bytes}) => bytes)};
    }
    const stack: {node: Record<string | number, unknown>, path: (string | number)[]}[] = [];
    if (value !== null && typeof value === "object")
        stack.push({node: value as Record<string, unknown>, path: []});
    while (stack.length > 0) {
        const {node, path} = stack.pop()!;
        for (const key of Array.isArray(node) ? node.keys() : Object.keys(node)) {
            const item = node[key];
            if (typeof item === "string") {
                if (item.length >= minLength) {
                    take(item, [...path, key]);
                    node[key] = "";
                }
            } else if (item !== null && typeof item === "object")
                stack.push({node: item as Record<string, unknown>, path: [...path, key]});
        }
    }
    return {value, strings, transfer: strings.map(({bytes}) => bytes)};
}

/** The length (UTF-16 code units) of a moved string, without making it: a Latin-1 byte is one, two UTF-16 bytes are one. */
export function movedLength({encoding, bytes}: MovedString): number {
    return encoding === "latin1" ? bytes.byteLength : bytes.byteLength / 2;
}

/** Puts moved strings back into the value they were taken from (in the receiving thread); returns the value (the root may be one). */
export function putLongStrings(value: unknown, strings: readonly MovedString[]): unknown {
    for (const {path, encoding, bytes} of strings) {
        const text = Buffer.from(bytes).toString(encoding);
        if (path.length === 0)
            return text;
        let node = value as Record<string | number, unknown>;
        for (const key of path.slice(0, -1))
            node = node[key] as Record<string | number, unknown>;
        node[path.at(-1)!] = text;
    }
    return value;
}
