import type { AnySchema } from "ajv";
import { ApiError } from "../http/ApiError.js";
import { createAjv } from "./createAjv.js";
import { describeAjvError } from "./describeAjvError.js";

/**
 * Compiles a request-body schema once (at startup, so a broken schema fails the boot) into a
 * function that returns the typed body or throws the 400 naming the offending field.
 */
export function compileRequestValidator<T>(schema: AnySchema): (body: unknown) => T {
    const validate = createAjv().compile<T>(schema);
    return (body: unknown): T => {
        if (!validate(body)) {
            const {message, param} = describeAjvError(validate.errors?.[0], body);
            throw ApiError.invalidRequest(message, param);
        }
        return body as T;
    };
}
