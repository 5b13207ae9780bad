/**
 * The part of the manifest a capability owns: the fields only its entries may have (JSON-schema
 * properties, validated with the rest of the manifest at startup) and how they become settings.
 */
export type ManifestSettings<Settings> = {
    properties: Readonly<Record<string, object>>;
    /**
     * Applies defaults and the checks a schema cannot express. Throws `ManifestFieldError` naming
     * the field; the loader adds the file and the entry's index.
     */
    parse(fields: Record<string, unknown>, entry: {id: string, path: string, /** The manifest's folder: relative paths start there. */ folder: string}): Settings;
};
