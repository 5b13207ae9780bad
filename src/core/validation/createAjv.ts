import { Ajv } from "ajv";
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
