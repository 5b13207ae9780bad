import type { ParameterMarkup } from "../ChatEngine.js";

/**
 * Tool calls whose arguments the template writes one by one in markup, not as one JSON object: Qwen3-Coder's, Qwen3.5's
 * and Nemotron-3's `<parameter=KEY>\nVALUE\n</parameter>`, GLM-4.6's and GLM-4.7's `<arg_key>KEY</arg_key>\n<arg_value>VALUE</arg_value>`.
 * node-llama-cpp detects such a template's call format as one argument it names `params` holding the whole arguments as
 * JSON, which is neither what the model was trained to write nor how the template renders a past call; llama.cpp has a
 * parser per such format. Here the markup is read from the template itself: a probe call with two string arguments
 * and one with none, rendered as the template renders past calls, give the text between the pieces (see
 * {@link deriveParameterMarkup}); a call is then `prefix NAME nameEnd (keyStart KEY keyEnd VALUE valueEnd)* callEnd`, where
 * node-llama-cpp's `paramsPrefix` and `suffix` become `nameEnd` and `callEnd`.
 */

/** The probe's names and values: plain words no template changes and no other text of a prompt holds. */
export const parameterProbe = {name: "probefnqx", keys: ["probekeyaqx", "probekeybqx"], values: ["probevalaqx", "probevalbqx"]} as const;

/**
 * The markup, from the template's renderings of the probe call: `two` with both keys and values, `none` with no
 * arguments; `prefix` and `suffix` as node-llama-cpp detected them (the text before the name, and after the last value).
 * Null when the renderings do not have the shape (the template is then taken to have no tool support: a wrong format
 * would make every call fail).
 */
export function deriveParameterMarkup(two: string, none: string, prefix: string, suffix: string):
    {nameEnd: string, callEnd: string, markup: ParameterMarkup} | null {
    const {name, keys, values} = parameterProbe;
    // The call, not the function's definition among the tools: the name right after the prefix.
    const call = two.indexOf(prefix + name);
    if (call < 0)
        return null;
    const at = [keys[0], values[0], keys[1], values[1]].reduce<number[]>((positions, text) => {
        const position = two.indexOf(text, positions.at(-1)! + 1);
        return [...positions, position < 0 ? Infinity : position];
    }, [call + prefix.length]);
    if (at.some((position) => !Number.isFinite(position)))
        return null;
    const between = (from: number, fromText: string, to: number) => two.slice(from + fromText.length, to);
    const nameToKey = between(at[0], name, at[1]);
    const keyEnd = between(at[1], keys[0], at[2]);
    const valueToKey = between(at[2], values[0], at[3]);
    if (between(at[3], keys[1], at[4]) !== keyEnd || !two.startsWith(suffix, at[4] + values[1].length))
        return null;
    // valueToKey is valueEnd + keyStart and suffix is valueEnd + callEnd: valueEnd is the longest text they start with
    // that leaves a keyStart nameToKey also ends with (nameToKey = nameEnd + keyStart).
    for (let length = Math.min(valueToKey.length, suffix.length); length >= 0; length--) {
        const valueEnd = valueToKey.slice(0, length);
        const keyStart = valueToKey.slice(length);
        if (!suffix.startsWith(valueEnd) || keyStart === "" || !nameToKey.endsWith(keyStart))
            continue;
        const nameEnd = nameToKey.slice(0, nameToKey.length - keyStart.length);
        const callEnd = suffix.slice(valueEnd.length);
        // The call without arguments must be `prefix NAME nameEnd callEnd`, as the template writes it.
        if (!none.includes(prefix + name + nameEnd + callEnd) || nameEnd + callEnd === "")
            continue;
        return {nameEnd, callEnd, markup: {keyStart, keyEnd, valueEnd}};
    }
    return null;
}

/**
 * A call's arguments as a JSON object text, from the markup between its name and its end (`body`); null when the body
 * is not that markup. A value is the text as written when the function's schema says the parameter is a string (or
 * says nothing of it and the text is not JSON), else its JSON (`2`, `true`, `{"a": 1}`; Python's `True`/`False`/`None`,
 * which Jinja's `string` filter writes, too). `cut`: the generation stopped inside the call; the pairs written whole are kept.
 */
export function argumentsFromMarkup(body: string, markup: ParameterMarkup, schema: Record<string, unknown> | undefined, cut = false): string | null {
    const {keyStart, keyEnd, valueEnd} = markup;
    const args: Record<string, unknown> = {};
    let at = 0;
    while (at < body.length) {
        if (body.slice(at).trim() === "")
            break;
        if (!body.startsWith(keyStart, at))
            return cut ? JSON.stringify(args) : null;
        const keyAt = at + keyStart.length;
        const valueAt = body.indexOf(keyEnd, keyAt);
        const end = valueAt < 0 ? -1 : body.indexOf(valueEnd, valueAt + keyEnd.length);
        if (end < 0)
            return cut ? JSON.stringify(args) : null;
        const key = body.slice(keyAt, valueAt).trim();
        if (key === "")
            return cut ? JSON.stringify(args) : null;
        args[key] = typedValue(body.slice(valueAt + keyEnd.length, end), propertySchema(schema, key));
        at = end + valueEnd.length;
    }
    return JSON.stringify(args);
}

function propertySchema(schema: Record<string, unknown> | undefined, key: string): Record<string, unknown> | undefined {
    const properties = schema?.properties;
    const property = properties != null && typeof properties === "object" ? (properties as Record<string, unknown>)[key] : undefined;
    return property != null && typeof property === "object" ? property as Record<string, unknown> : undefined;
}

const pythonLiterals: Record<string, unknown> = {True: true, False: false, None: null};

function typedValue(text: string, schema: Record<string, unknown> | undefined): unknown {
    const types = schema == null ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.includes("string") || (schema?.enum != null && Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === "string")))
        return text;
    const trimmed = text.trim();
    if (Object.hasOwn(pythonLiterals, trimmed))
        return pythonLiterals[trimmed];
    try {
        return JSON.parse(trimmed);
    } catch {
        return text;
    }
}
