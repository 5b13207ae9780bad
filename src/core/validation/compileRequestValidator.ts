import type { AnySchema } from "ajv";
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
            const {message, param} = describeAjvError(validate.errors?.[0], body);
            throw ApiError.invalidRequest(message, param);
        }
        return body as T;
    };
}
