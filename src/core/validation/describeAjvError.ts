import type { ErrorObject } from "ajv";

/**
 * Turns ajv's first error into an OpenAI-style message and the `param` that names the field
 * (`messages[0].content`), so a client can point at the exact offending input.
 */
export function describeAjvError(error: ErrorObject | undefined, data: unknown): {message: string, param: string | null} {
    if (error == null)
        return {message: "Invalid request.", param: null};

    const base = instancePathToParam(error.instancePath, data);
    const child = (key: string) => base == null ? key : `${base}.${key}`;
    const at = (param: string | null) => param == null ? "the request body" : `'${param}'`;
    const params = error.params as Record<string, unknown>;

    if (error.propertyName != null) {
        const param = child(error.propertyName);
        return {param, message: `Invalid key ${JSON.stringify(error.propertyName)} in ${at(base)}: ${error.message ?? "not accepted"}.`};
    }

    switch (error.keyword) {
        case "required": {
            const param = child(String(params.missingProperty));
            return {param, message: `Missing required parameter: '${param}'.`};
        }
        case "additionalProperties": {
            const param = child(String(params.additionalProperty));
            return {param, message: `Unrecognized parameter: '${param}'.`};
        }
        case "type":
            return {param: base, message: `Invalid type for ${at(base)}: expected ${article(String(params.type))}, but got ${describeValue(error.data)} instead.`};
        case "enum":
            return {param: base, message: `Invalid value for ${at(base)}: ${JSON.stringify(error.data)}. Supported values are: ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(", ")}.`};
        case "const":
            return {param: base, message: `Invalid value for ${at(base)}: ${JSON.stringify(error.data)}. The only supported value is ${JSON.stringify(params.allowedValue)}.`};
        case "minimum": case "maximum": case "exclusiveMinimum": case "exclusiveMaximum":
            return {param: base, message: `Invalid value for ${at(base)}: ${JSON.stringify(error.data)} ${comparisonText(error.keyword, params.limit)}.`};
        case "minItems":
            return {param: base, message: `Invalid ${at(base)}: expected an array with minimum length ${params.limit}, but got an array with length ${lengthOf(error.data)} instead.`};
        case "maxItems":
            return {param: base, message: `Invalid ${at(base)}: expected an array with maximum length ${params.limit}, but got an array with length ${lengthOf(error.data)} instead.`};
        case "minLength":
            return {param: base, message: `Invalid ${at(base)}: string too short, expected at least ${params.limit} characters.`};
        case "maxLength":
            return {param: base, message: `Invalid ${at(base)}: string too long, expected at most ${params.limit} characters.`};
        case "minProperties":
            return {param: base, message: `Invalid ${at(base)}: expected an object with at least ${params.limit} properties.`};
        default:
            return {param: base, message: `Invalid value for ${at(base)}: ${error.message ?? "not accepted"}.`};
    }
}

/**
 * `/messages/0/content` -> `messages[0].content` (JSON-pointer escapes undone). The data is walked
 * alongside, so an array index reads `[0]` while a numeric object key (`logit_bias`) reads `.50256`.
 */
export function instancePathToParam(instancePath: string, data: unknown): string | null {
    if (instancePath === "")
        return null;
    let param = "";
    let node = data;
    for (const raw of instancePath.split("/").slice(1)) {
        const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
        param += Array.isArray(node) ? `[${segment}]` : (param === "" ? segment : `.${segment}`);
        node = node != null && typeof node === "object" ? (node as Record<string, unknown>)[segment] : undefined;
    }
    return param;
}

function comparisonText(keyword: string, limit: unknown) {
    switch (keyword) {
        case "minimum": return `is below the minimum of ${limit}`;
        case "maximum": return `is above the maximum of ${limit}`;
        case "exclusiveMinimum": return `must be greater than ${limit}`;
        default: return `must be less than ${limit}`;
    }
}

function article(type: string) {
    return type.split(",").map((name) => (name === "integer" || name === "object" || name === "array" ? "an " : "a ") + name).join(" or ");
}

function describeValue(value: unknown) {
    if (value === null) return "null";
    if (Array.isArray(value)) return "an array";
    if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a decimal";
    if (typeof value === "object") return "an object";
    return `a ${typeof value}`;
}

function lengthOf(value: unknown) {
    return Array.isArray(value) ? value.length : "?";
}
