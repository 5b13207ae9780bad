import { Ajv, type AnySchema, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS; under NodeNext its default import is the module namespace.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * One Ajv configuration for every schema in the server. Schemas are compiled at startup
 * (`strict: true` makes a mistake in a schema throw then, not on the first request).
 * `allErrors` is off: the first error is the one reported, and stopping early is cheaper.
 * `verbose` puts the offending value on each error, so messages can quote it.
 */
export function createAjv() {
    const ajv = new Ajv({strict: true, allErrors: false, coerceTypes: false, useDefaults: false, allowUnionTypes: true, verbose: true});
    addFormats(ajv, ["date"]);
    return ajv;
}

const compiled = new WeakMap<object, ValidateFunction>();

/**
 * `schema` compiled once per process (by schema object): every server made in one process (a test file's servers)
 * shares the request validators, which otherwise cost ~0.5-0.9 s of compiling per server start on the 2-core machine.
 * A validator keeps no state between calls but its `errors`, read at once after the call that set them.
 */
export function compileSchema<T>(schema: AnySchema): ValidateFunction<T> {
    if (typeof schema !== "object")
        return createAjv().compile<T>(schema);
    let validate = compiled.get(schema);
    if (validate == null) {
        validate = createAjv().compile(schema);
        compiled.set(schema, validate);
    }
    return validate as ValidateFunction<T>;
}
