/** What is wrong at a path of a parsed JSON body: nested too deep, a key that reaches an object's prototype, or too many values (the path: the top-level field holding most). */
export type JsonHazard = {path: (string | number)[], problem: "too_deep" | "prototype_key" | "too_many_values"}
    /** A top-level field's array longer than its route allows (`maxItems`): the field, its bound and its length. */
    | {path: [string], problem: "too_many_items", limit: number, length: number}
    /** A top-level field holding more values than its route allows in it (`maxFieldValues`): the field, its bound, and the path of the object or array that crossed it. */
    | {path: (string | number)[], problem: "field_too_large", field: string, limit: number};

/**
 * What is wrong, as the rest of a sentence whose subject the caller names ("The request body …", "… is valid JSON,
 * but it …"): "holds more than 100,000 JSON values", "nests objects/arrays more than 128 levels deep", "has a
 * '__proto__' key". The same words for every JSON a client sends.
 */
export function describeJsonHazard(hazard: JsonHazard, bounds: {maxDepth: number, maxValues: number}): string {
    switch (hazard.problem) {
        case "too_many_items":
            return `holds ${hazard.length.toLocaleString("en-US")} items in '${hazard.path[0]}', more than ${hazard.limit.toLocaleString("en-US")}`;
        case "too_many_values":
            return `holds more than ${bounds.maxValues.toLocaleString("en-US")} JSON values`;
        case "field_too_large":
            return `holds more than ${hazard.limit.toLocaleString("en-US")} JSON values in '${hazard.field}'`;
        case "too_deep":
            return `nests objects/arrays more than ${bounds.maxDepth} levels deep`;
        default:
            return `has a '${hazard.path.at(-1)}' key, refused as prototype poisoning`;
    }
}

/**
 * The first hazard in a parsed JSON body, or null when it has none:
 *
 * - a value nested deeper than `maxDepth` objects/arrays (its path, at most `maxDepth + 1` segments).
 *   Everything downstream that walks a request (validation, the JSON-schema checker, grammar builders)
 *   recurses, and a body nested thousands of levels deep would overflow their stack (a 500 that depends
 *   on the depth and the stack size); bounding depth once, here, makes every depth an answer: a 400;
 * - a `__proto__` key, or `constructor` holding `prototype` (prototype poisoning: code that copies such
 *   an object with assignment changes its prototype), as the usual body parsers refuse them;
 * - more than `maxValues` values of any kind (objects, arrays, strings, numbers...): a route's own bound. A
 *   body parsed in a worker thread (parseJsonOffThread) is rebuilt on the main thread value by value (250,000
 *   empty chat messages took about a second there), so the worker looks for hazards and sends only those back.
 *
 * - a top-level field whose array is longer than `maxItems` allows it (a route's schema bound, such as 10,000 chat
 *   messages, checked here too so that a body past it is refused where it was parsed, before it is rebuilt on the
 *   main thread: 32,000 empty messages are 1 MB of JSON and 96,000 values, within `maxValues`);
 * - a top-level field holding more values than `maxFieldValues` allows in it (a structured-output schema, bounded
 *   far below by what its grammar may hold: a 40,000-value enum rebuilt on the main thread cost it 40-70 ms there,
 *   most of it garbage collection).
 *
 * Iterative, one pass, each frame pointing to its parent: the path is built only for the answer. Stops as soon
 * as a bound is crossed (an array too long for `maxValues` is refused from its length).
 */
export function findJsonHazard(body: unknown, maxDepth: number, maxValues = Infinity, maxItems: Readonly<Record<string, number>> = {},
    maxFieldValues: Readonly<Record<string, number>> = {}): JsonHazard | null {
    if (body !== null && typeof body === "object" && !Array.isArray(body))
        for (const [field, limit] of Object.entries(maxItems)) {
            const value = Object.hasOwn(body, field) ? (body as Record<string, unknown>)[field] : undefined;
            if (Array.isArray(value) && value.length > limit)
                return {path: [field], problem: "too_many_items", limit, length: value.length};
        }
    type Frame = {value: unknown, depth: number, key: string | number | null, parent: Frame | null, field: string | null};
    const stack: Frame[] = [{value: body, depth: 0, key: null, parent: null, field: null}];
    // Values so far, and per top-level field (named in the answer when there are too many).
    let values = 1;
    const perField = new Map<string | null, number>();
    const tooMany = (frame: Frame, children: number, fieldOf: (index: number) => string | null): JsonHazard | null => {
        values += children;
        if (frame.parent == null)
            for (let index = 0; index < children; index++)
                perField.set(fieldOf(index), (perField.get(fieldOf(index)) ?? 0) + 1);
        else {
            const count = (perField.get(frame.field) ?? 0) + children;
            perField.set(frame.field, count);
            const limit = frame.field == null || !Object.hasOwn(maxFieldValues, frame.field) ? undefined : maxFieldValues[frame.field];
            if (limit != null && count > limit)
                return {path: pathOf(frame), problem: "field_too_large", field: frame.field!, limit};
        }
        return values > maxValues ? {path: busiest(perField), problem: "too_many_values"} : null;
    };
    while (stack.length > 0) {
        const frame = stack.pop()!;
        const value = frame.value;
        if (value === null || typeof value !== "object")
            continue;
        if (frame.depth + 1 > maxDepth)
            return {path: pathOf(frame), problem: "too_deep"};
        const childField = (key: string | number) => frame.parent == null ? (typeof key === "string" ? key : null) : frame.field;
        if (Array.isArray(value)) {
            const hazard = tooMany(frame, value.length, () => null);
            if (hazard != null)
                return hazard;
            for (let index = value.length - 1; index >= 0; index--)
                stack.push({value: value[index], depth: frame.depth + 1, key: index, parent: frame, field: childField(index)});
            continue;
        }
        const keys = Object.keys(value);
        const hazard = tooMany(frame, keys.length, (index) => keys[index]);
        if (hazard != null)
            return hazard;
        for (let index = keys.length - 1; index >= 0; index--) {
            const key = keys[index];
            const child = (value as Record<string, unknown>)[key];
            const next: Frame = {value: child, depth: frame.depth + 1, key, parent: frame, field: childField(key)};
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

/** The top-level field holding the most values counted, as a path (empty when the body is an array). */
function busiest(perField: Map<string | null, number>): (string | number)[] {
    let field: string | null = null;
    let most = -1;
    for (const [name, count] of perField)
        if (count > most)
            [field, most] = [name, count];
    return field == null ? [] : [field];
}
