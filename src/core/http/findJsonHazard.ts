/** What is wrong at a path of a parsed JSON body: nested too deep, or a key that reaches an object's prototype. */
export type JsonHazard = {path: (string | number)[], problem: "too_deep" | "prototype_key"};

/**
 * The first hazard in a parsed JSON body, or null when it has none:
 *
 * - a value nested deeper than `maxDepth` objects/arrays (its path, at most `maxDepth + 1` segments).
 *   Everything downstream that walks a request (validation, the JSON-schema checker, grammar builders)
 *   recurses, and a body nested thousands of levels deep would overflow their stack (a 500 that depends
 *   on the depth and the stack size); bounding depth once, here, makes every depth an answer: a 400;
 * - a `__proto__` key, or `constructor` holding `prototype` (prototype poisoning: code that copies such
 *   an object with assignment changes its prototype), as the usual body parsers refuse them.
 *
 * Iterative, one pass, each frame pointing to its parent: the path is built only for the answer.
 */
export function findJsonHazard(body: unknown, maxDepth: number): JsonHazard | null {
    type Frame = {value: unknown, depth: number, key: string | number | null, parent: Frame | null};
    const stack: Frame[] = [{value: body, depth: 0, key: null, parent: null}];
    while (stack.length > 0) {
        const frame = stack.pop()!;
        const value = frame.value;
        if (value === null || typeof value !== "object")
            continue;
        if (frame.depth + 1 > maxDepth)
            return {path: pathOf(frame), problem: "too_deep"};
        if (Array.isArray(value)) {
            for (let index = value.length - 1; index >= 0; index--)
                stack.push({value: value[index], depth: frame.depth + 1, key: index, parent: frame});
            continue;
        }
        const keys = Object.keys(value);
        for (let index = keys.length - 1; index >= 0; index--) {
            const key = keys[index];
            const child = (value as Record<string, unknown>)[key];
            const next: Frame = {value: child, depth: frame.depth + 1, key, parent: frame};
            if (key === "__proto__" || (key === "constructor" && child !== null && typeof child === "object" && Object.hasOwn(child, "prototype")))
                return {path: pathOf(next), problem: "prototype_key"};
            stack.push(next);
        }
    }
    return null;
}

function pathOf(frame: {key: string | number | null, parent: typeof frame | null}): (string | number)[] {
    const path: (string | number)[] = [];
    for (let at: typeof frame | null = frame; at?.parent != null; at = at.parent)
        path.push(at.key!);
    return path.reverse();
}
