import type { AnySchema, ErrorObject } from "ajv";
import { ApiError } from "../../../core/http/ApiError.js";
import { compileSchema } from "../../../core/validation/createAjv.js";

/**
 * A Messages request validator (compiled once at startup) whose 400s read as Anthropic's API words them: the
 * field's path with dots (`messages.1.role`), then its validator's phrase (`Field required`, `Input should be
 * 'user' or 'assistant'`, `Input tag 'x' found using 'type' does not match any of the expected tags: ...`).
 * Clients match these words: Claude Code falls back (drops a beta field, a system turn) only on errors
 * worded so. The path is also the error's `param`.
 */
export function compileMessagesValidator<T>(schema: AnySchema): (body: unknown) => T {
    const validate = compileSchema<T>(schema);
    return (body: unknown): T => {
        if (!validate(body)) {
            const {message, param} = describeForAnthropic(validate.errors?.[0]);
            throw ApiError.invalidRequest(message, param);
        }
        return body as T;
    };
}

/** ajv's first error in Anthropic's words. */
function describeForAnthropic(error: ErrorObject | undefined): {message: string, param: string | null} {
    if (error == null)
        return {message: "Invalid request.", param: null};
    const base = error.instancePath === "" ? null : error.instancePath.split("/").slice(1).map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~")).join(".");
    const params = error.params as Record<string, unknown>;
    const at = (param: string | null, phrase: string) => ({param, message: param == null ? phrase : `${param}: ${phrase}`});
    const child = (key: string) => base == null ? key : `${base}.${key}`;
    const last = base?.split(".").at(-1);
    switch (error.keyword) {
        case "required":
            return at(child(String(params.missingProperty)), "Field required");
        case "additionalProperties":
            return at(child(String(params.additionalProperty)), "Extra inputs are not permitted");
        case "type":
            return at(base, `Input should be a valid ${typeName(String(params.type))}`);
        case "enum": {
            const allowed = (params.allowedValues as unknown[]).filter((value) => value !== null);
            // A tagged union's tag (`type`, `role`), as Anthropic's validator reports it.
            if (last === "type" || last === "role")
                return at(base, `Input tag ${quote(error.data)} found using '${last}' does not match any of the expected tags: ${allowed.map(quote).join(", ")}`);
            return at(base, `Input should be ${listed(allowed)}`);
        }
        case "const":
            return at(base, `Input should be ${quote(params.allowedValue)}`);
        case "minimum":
            return at(base, `Input should be greater than or equal to ${params.limit}`);
        case "maximum":
            return at(base, `Input should be less than or equal to ${params.limit}`);
        case "minItems":
            return at(base, `List should have at least ${plural(Number(params.limit), "item")} after validation, not ${Array.isArray(error.data) ? error.data.length : "?"}`);
        case "maxItems":
            return at(base, `List should have at most ${plural(Number(params.limit), "item")} after validation, not ${Array.isArray(error.data) ? error.data.length : "?"}`);
        case "minLength":
            return at(base, `String should have at least ${plural(Number(params.limit), "character")}`);
        case "pattern":
            return at(base, `String should match pattern '${params.pattern}'`);
        default:
            return at(base, `Invalid value: ${error.message ?? "not accepted"}`);
    }
}

/** JSON schema type names in Anthropic's (pydantic's) words; a union names its first non-null type. */
function typeName(types: string) {
    const first = types.split(",").find((type) => type !== "null") ?? "null";
    return ({object: "dictionary", array: "list", boolean: "boolean", integer: "integer", number: "number", string: "string"} as Record<string, string>)[first] ?? first;
}

function quote(value: unknown) {
    return typeof value === "string" ? `'${value.length > 100 ? `${value.slice(0, 100)}...` : value}'` : JSON.stringify(value)?.slice(0, 100) ?? "undefined";
}

function listed(values: unknown[]) {
    const quoted = values.map(quote);
    return quoted.length <= 1 ? quoted.join("") : `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}`;
}

function plural(count: number, noun: string) {
    return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
