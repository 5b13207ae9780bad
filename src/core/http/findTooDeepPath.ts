/**
 * The path (`a.b[3].c`, at most `maxDepth + 1` segments) of the first value in a parsed JSON body that
 * sits deeper than `maxDepth` nested objects/arrays, or null when the whole body is within it.
 *
 * Iterative on purpose: everything downstream that walks a request (validation, the JSON-schema
 * checker, grammar builders) recurses, and a body nested thousands of levels deep would overflow
 * their stack (a 500 that depends on the depth and the stack size). Bounding depth once, here,
 * before any of them runs, makes every depth an answer of its own: a 400.
 */
export function findTooDeepPath(body: unknown, maxDepth: number): (string | number)[] | null {
    type Frame = {value: unknown, depth: number, path: (string | number)[]};
    const stack: Frame[] = [{value: body, depth: 0, path: []}];
    while (stack.length > 0) {
        const {value, depth, path} = stack.pop()!;
        if (value === null || typeof value !== "object")
            continue;
        if (depth + 1 > maxDepth)
            return path;
        if (Array.isArray(value)) {
            for (let index = value.length - 1; index >= 0; index--)
                stack.push({value: value[index], depth: depth + 1, path: [...path, index]});
        } else {
            const entries = Object.entries(value);
            for (let index = entries.length - 1; index >= 0; index--)
                stack.push({value: entries[index][1], depth: depth + 1, path: [...path, entries[index][0]]});
        }
    }
    return null;
}
