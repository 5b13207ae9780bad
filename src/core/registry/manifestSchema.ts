import type { ManifestSettings } from "./ManifestSettings.js";

const namePattern = "^[A-Za-z0-9][A-Za-z0-9._:/+-]*$";

/** The fields every entry may have, whatever its task. */
export const commonModelProperties = {
    id: {type: "string", pattern: namePattern, maxLength: 200},
    path: {type: "string", minLength: 1},
    family: {type: "string", pattern: namePattern, maxLength: 200},
    released: {type: "string", format: "date"},
    aliases: {
        type: "array",
        uniqueItems: true,
        items: {type: "string", minLength: 1, maxLength: 200, pattern: "^\\S+$"}
    },
    ownedBy: {type: "string", minLength: 1},
    description: {type: "string"},
    contextSize: {type: "integer", minimum: 16, maximum: 1048576},
    threads: {type: "integer", minimum: 1, maximum: 256},
    parallel: {type: "integer", minimum: 1, maximum: 64},
    workers: {type: "integer", minimum: 1, maximum: 64},
    preload: {type: "boolean"},
    // Checked by parseKeepAlive (loadManifest): `forever`, seconds (a number, 1.5 too, or text), or a duration such as "5m".
    keepAlive: {type: ["string", "number"]},
    pin: {type: "boolean"}
} as const;

/**
 * JSON schema of `models.json`: the common fields plus every capability's own. Unknown keys are
 * rejected so a typo (`contextsize`) is an error at startup rather than a silently ignored setting;
 * a field of another task is caught after the schema, with a message saying which task it belongs to.
 */
export function manifestSchema(settingsByTask: Readonly<Record<string, ManifestSettings<unknown> | undefined>>) {
    const taskProperties = Object.assign({}, ...Object.values(settingsByTask).map((settings) => settings?.properties ?? {}));
    return {
        type: "object",
        required: ["models"],
        additionalProperties: false,
        properties: {
            $schema: {type: "string"},
            models: {
                type: "array",
                items: {
                    type: "object",
                    required: ["id", "task", "path"],
                    additionalProperties: false,
                    properties: {...commonModelProperties, task: {enum: Object.keys(settingsByTask)}, ...taskProperties}
                }
            }
        }
    };
}
