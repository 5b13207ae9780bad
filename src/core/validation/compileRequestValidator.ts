import type { AnySchema, ErrorObject } from "ajv";
import { ApiError } from "../http/ApiError.js";
import { compileSchema } from "./createAjv.js";
import { describeAjvError } from "./describeAjvError.js";

/**
 * Compiles a request-body schema (at startup, so a broken schema fails the boot; once per process: compileSchema) into a
 * function that returns the typed body or throws the 400 naming the offending field.
 */
export function compileRequestValidator<T>(schema: AnySchema): (body: unknown) => T {
    const validate = compileSchema<T>(schema);
    return (body: unknown): T => {
        if (!validate(body)) {
            const {message, param} = describeAjvError(reportedError(validate.errors ?? []), body);
            throw ApiError.invalidRequest(message, param);
        }
        return body as T;
    };
}

/**
 * The error to report: the first; but where a field may take several shapes (`anyOf`: a string or a list of parts),
 * each shape's error is listed, the first one being the string's ("expected a string") for a list whose item is wrong:
 * then the one that reached deepest into the value (`input[0].content[0].type`), other than a type mismatch where
 * another error is as deep (a list too short says so, not that it is not a string).
 */
function reportedError(errors: readonly ErrorObject[]): ErrorObject | undefined {
    if (!errors.some((error) => error.keyword === "anyOf" || error.keyword === "oneOf"))
        return errors[0];
    // A missing or unknown property names a child of its path: one deeper.
    const depth = (error: ErrorObject) => error.instancePath.split("/").length + (error.keyword === "required" || error.keyword === "additionalProperties" ? 1 : 0);
    const candidates = errors.filter((error) => error.keyword !== "anyOf" && error.keyword !== "oneOf");
    const deepest = Math.max(...candidates.map(depth));
    const atDepth = candidates.filter((error) => depth(error) === deepest);
    return atDepth.find((error) => error.keyword !== "type") ?? atDepth[0] ?? errors[0];
}
