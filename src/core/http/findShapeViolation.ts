/**
 * What a route accepts of a parsed JSON body's shape, before anything else walks it.
 *
 * `maxDepth`: nested objects/arrays. Everything downstream that walks a request (validation, the JSON-schema
 * checker, grammar builders) recurses, and a body nested thousands of levels deep would overflow their stack (a
 * 500 that depends on the depth and the stack size); bounding depth once, here, makes every depth a 400.
 *
 * `maxValues`: values of any kind (objects, arrays, strings, numbers, booleans, nulls). A body that crosses
 * threads (parsed in a worker, see parseJsonOffThread) is rebuilt on the main thread value by value: 250,000
 * empty chat messages took about a second there, 400,000 Responses items two; within the bound it takes a few
 * milliseconds, so the body is refused in the worker instead.
 */
export type JsonShapeBounds = {maxDepth: number, maxValues?: number};

/**
 * `depth`: the path (`a.b[3].c`, at most `maxDepth + 1` segments) of the first value, in document order, deeper
 * than `maxDepth`. `values`: the body holds more than `maxValues` values; `field` is the top-level field holding
 * the most of those counted (null when the body is an array).
 */
export type JsonShapeViolation =
    | {kind: "depth", path: (string | number)[]}
    | {kind: "values", field: string | null};

type Frame = {value: object, depth: number, parent: Frame | null, key: string | number, field: string | null};

/**
 * The first way `body` exceeds `bounds`, or null. Iterative (no recursion to overflow), each value visited once,
 * with nothing allocated per value but one frame per object/array; stops as soon as a bound is crossed (an array
 * too long for `maxValues` is refused from its length).
 */
export function findShapeViolation(body: unknown, bounds: JsonShapeBounds): JsonShapeViolation | null {
    if (body === null || typeof body !== "object")
        return null;
    const maxValues = bounds.maxValues ?? Infinity;
    // Values counted so far per top-level field (the depth-first walk finishes one field before the next).
    const perField = new Map<string | null, number>();
    let values = 1;
    const stack: Frame[] = [{value: body, depth: 1, parent: null, key: "", field: null}];
    while (stack.length > 0) {
        const frame = stack.pop()!;
        if (frame.depth > bounds.maxDepth)
            return {kind: "depth", path: pathOf(frame)};
        const isArray = Array.isArray(frame.value);
        const keys = isArray ? null : Object.keys(frame.value);
        const count = isArray ? (frame.value as unknown[]).length : keys!.length;
        values += count;
        if (frame.parent == null && keys != null)
            for (const key of keys)
                perField.set(key, 1);
        else
            perField.set(frame.field, (perField.get(frame.field) ?? 0) + count);
        if (values > maxValues)
            return {kind: "values", field: busiestField(perField)};
        // Pushed last to first, so that the first child is walked first (document order).
        for (let index = count - 1; index >= 0; index--) {
            const key = isArray ? index : keys![index];
            const child = (frame.value as Record<string | number, unknown>)[key];
            if (child !== null && typeof child === "object")
                stack.push({value: child, depth: frame.depth + 1, parent: frame, key, field: frame.parent == null ? (isArray ? null : key as string) : frame.field});
        }
    }
    return null;
}
function pathOf(frame: Frame): (string | number)[] {
    const path: (string | number)[] = [];
    for (let at: Frame | null = frame; at?.parent != null; at = at.parent)
        path.push(at.key);
    return path.reverse();
}

function busiestField(perField: Map<string | null, number>): string | null {
    let busiest: string | null = null;
    let most = -1;
    for (const [field, count] of perField)
        if (count > most)
            [busiest, most] = [field, count];
    return busiest;
}
