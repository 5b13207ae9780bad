import { ApiError } from "../../core/http/ApiError.js";
import { isJsonObject } from "../../core/validation/isJsonObject.js";

/** Keywords that only annotate a schema: safe to ignore when building the grammar. */
const annotations = new Set(["title", "description", "$comment", "examples", "default", "$schema", "$id", "deprecated", "readOnly", "writeOnly"]);

/** Keywords the grammar enforces, per node-llama-cpp's JSON-schema grammar (anyOf is read as oneOf). */
const enforced = new Set([
    "type", "const", "enum", "oneOf", "anyOf", "$defs", "$ref",
    "properties", "additionalProperties", "required", "minProperties", "maxProperties",
    "items", "prefixItems", "minItems", "maxItems", "minLength", "maxLength", "format"
]);

const types = new Set(["string", "number", "integer", "boolean", "null", "object", "array"]);
const formats = new Set(["date", "time", "date-time"]);
const counts = ["minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"] as const;

/**
 * Bounds on what a schema may ask of the grammar builder, which runs on the main thread and grows
 * faster than linearly with large enums (40,000 entries took 7 s, stalling every other request).
 * Real schemas stay far below them; past them the request is a 400 naming the field.
 */
export const jsonSchemaLimits = {
    /** Values of one `enum`. */
    enumValues: 1024,
    /** Schema objects in the whole schema (every property, item, branch and definition counts). */
    nodes: 2048,
    /** `enum` and `const` values in the whole schema, together. */
    literalValues: 4096
} as const;

/**
 * Checks that every keyword of a `json_schema` can be enforced by the grammar, so no constraint is
 * silently dropped (a `pattern` or `minimum` the output would not honour is a 400 naming it), and
 * returns the schema in the dialect node-llama-cpp reads (`anyOf` -> `oneOf`, annotations removed).
 */
export function checkJsonSchema(schema: unknown, param: string): Record<string, unknown> {
    const rootDefs = isJsonObject(schema) && isJsonObject(schema.$defs) ? new Set(Object.keys(schema.$defs)) : new Set<string>();
    return visit(schema, param, {rootDefs, nodes: 0, literals: 0}) as Record<string, unknown>;
}

type Walk = {rootDefs: ReadonlySet<string>, nodes: number, literals: number};

function visit(node: unknown, at: string, walk: Walk): unknown {
    if (++walk.nodes > jsonSchemaLimits.nodes)
        throw tooLarge(at, `more than ${jsonSchemaLimits.nodes} schema objects`);
    const rootDefs = walk.rootDefs;
    if (node === true || (isJsonObject(node) && Object.keys(node).every((key) => annotations.has(key))))
        throw unsupported(at, "a schema that allows any value (give it a 'type')");
    if (!isJsonObject(node))
        throw ApiError.invalidRequest(`Invalid JSON schema at '${at}': expected an object.`, at, "invalid_json_schema");

    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
        const here = `${at}.${key}`;
        if (annotations.has(key))
            continue;
        if (!enforced.has(key))
            throw unsupported(here, `the keyword '${key}'`);
        switch (key) {
            case "type": {
                const list = Array.isArray(value) ? value : [value];
                for (const type of list)
                    if (typeof type !== "string" || !types.has(type))
                        throw unsupported(here, `the type ${JSON.stringify(type)}`);
                out.type = value;
                break;
            }
            case "format":
                if (typeof value !== "string" || !formats.has(value))
                    throw unsupported(here, `the format ${JSON.stringify(value)} (supported: date, time, date-time)`);
                out.format = value;
                break;
            case "$ref":
                if (typeof value !== "string" || !/^#\/\$defs\/[^/]+$/.test(value))
                    throw unsupported(here, `the reference ${JSON.stringify(value)} (only '#/$defs/<name>' is supported)`);
                if (!rootDefs.has(value.slice("#/$defs/".length)))
                    throw ApiError.invalidRequest(`Invalid JSON schema at '${here}': ${JSON.stringify(value)} points to no definition in the schema's '$defs'.`,
                        here, "invalid_json_schema");
                out.$ref = value;
                break;
            case "properties": case "$defs":
                if (!isJsonObject(value))
                    throw ApiError.invalidRequest(`Invalid JSON schema at '${here}': expected an object.`, here, "invalid_json_schema");
                out[key] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, visit(child, `${here}.${name}`, walk)]));
                break;
            case "items": case "additionalProperties":
                out[key] = typeof value === "boolean" && key === "additionalProperties" ? value : visit(value, here, walk);
                break;
            case "oneOf": case "anyOf": case "prefixItems":
                if (!Array.isArray(value) || value.length === 0)
                    throw ApiError.invalidRequest(`Invalid JSON schema at '${here}': expected a non-empty array.`, here, "invalid_json_schema");
                out[key === "anyOf" ? "oneOf" : key] = value.map((child, index) => visit(child, `${here}[${index}]`, walk));
                break;
            case "enum":
                if (!Array.isArray(value) || value.length === 0)
                    throw ApiError.invalidRequest(`Invalid JSON schema at '${here}': expected a non-empty array of values.`, here, "invalid_json_schema");
                if (value.length > jsonSchemaLimits.enumValues)
                    throw tooLarge(here, `${value.length} values (at most ${jsonSchemaLimits.enumValues})`);
                walk.literals += value.length;
                out.enum = value;
                break;
            case "const":
                walk.literals++;
                out.const = value;
                break;
            case "required":
                if (!Array.isArray(value) || value.some((name) => typeof name !== "string") || new Set(value).size !== value.length)
                    throw ApiError.invalidRequest(`Invalid JSON schema at '${here}': expected an array of distinct property names.`, here, "invalid_json_schema");
                out.required = value;
                break;
            default:
                if ((counts as readonly string[]).includes(key) && !(Number.isInteger(value) && (value as number) >= 0))
                    throw ApiError.invalidRequest(`Invalid JSON schema at '${here}': expected a non-negative integer, got ${JSON.stringify(value)}.`, here, "invalid_json_schema");
                out[key] = value;
        }
    }
    if (walk.literals > jsonSchemaLimits.literalValues)
        throw tooLarge(at, `more than ${jsonSchemaLimits.literalValues} enum/const values in all`);
    for (const [min, max] of [["minItems", "maxItems"], ["minLength", "maxLength"], ["minProperties", "maxProperties"]] as const)
        if (typeof out[min] === "number" && typeof out[max] === "number" && (out[min] as number) > (out[max] as number))
            throw ApiError.invalidRequest(`Invalid JSON schema at '${at}.${min}': ${min} (${out[min]}) is more than ${max} (${out[max]}).`,
                `${at}.${min}`, "invalid_json_schema");
    if (out.type == null && out.const === undefined && out.enum == null && out.oneOf == null && out.$ref == null)
        throw unsupported(at, "a schema without 'type', 'const', 'enum', 'anyOf'/'oneOf' or '$ref'");
    return out;
}

function tooLarge(param: string, what: string) {
    return ApiError.invalidRequest(`JSON schema too large at '${param}': ${what}. Larger schemas would take the server too long to compile into a grammar.`,
        param, "json_schema_too_large");
}

function unsupported(param: string, what: string) {
    return ApiError.invalidRequest(`Unsupported JSON schema construct at '${param}': ${what} cannot be enforced by this server's grammar.`,
        param, "unsupported_json_schema");
}

