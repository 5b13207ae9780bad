import { catalogueTasks } from "./CatalogueEntry.js";

// Names become folder names and manifest ids: no slashes, nothing that could climb out of models/.
const namePattern = "^[a-z0-9][a-z0-9._-]*$";
// A relative path of plain segments: no leading "/", no "." or ".." segments, no backslashes.
export const relativePathPattern = "^(?!\\.{1,2}(/|$))(?!.*/\\.{1,2}(/|$))[^/\\\\][^\\\\]*$";

/**
 * JSON schema of the download catalogue. Strict like the manifest's: an unknown key is a typo.
 * `sha256` and `size` may be null for small git-tracked files (the hub publishes no sha256 for them);
 * test/download/catalogueValues.test.ts requires a sha256 for every weights file.
 */
export const catalogueSchema = {
    type: "object",
    required: ["models"],
    additionalProperties: false,
    properties: {
        $comment: {type: "string"},
        $schema: {type: "string"},
        models: {
            type: "array",
            minItems: 1,
            items: {
                type: "object",
                required: ["id", "task", "family", "released", "licence", "default", "description", "aliases", "repo", "revision", "files", "manifest"],
                additionalProperties: false,
                properties: {
                    $comment: {type: "string"},
                    id: {type: "string", pattern: namePattern, maxLength: 100},
                    task: {enum: [...catalogueTasks]},
                    family: {type: "string", pattern: namePattern, maxLength: 100},
                    released: {type: "string", format: "date"},
                    licence: {type: "string", minLength: 1},
                    default: {type: "boolean"},
                    description: {type: "string"},
                    aliases: {
                        type: "array",
                        uniqueItems: true,
                        items: {type: "string", minLength: 1, maxLength: 200, pattern: "^\\S+$"}
                    },
                    repo: {type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$"},
                    revision: {type: "string", pattern: "^[0-9a-f]{40}$"},
                    files: {
                        type: "array",
                        minItems: 1,
                        items: {
                            type: "object",
                            required: ["path", "size", "sha256"],
                            additionalProperties: false,
                            properties: {
                                path: {type: "string", pattern: relativePathPattern},
                                size: {type: ["integer", "null"], minimum: 0},
                                sha256: {type: ["string", "null"], pattern: "^[0-9a-f]{64}$"}
                            }
                        }
                    },
                    // Any other key is copied into the models.json entry as is (e.g. an embeddings model's
                    // `pooling`), so the catalogue follows the manifest schema without a copy of it here;
                    // the catalogue test checks the result against the server's manifest schema.
                    manifest: {
                        type: "object",
                        required: ["path"],
                        additionalProperties: true,
                        properties: {
                            path: {type: "string", pattern: `^\\.$|${relativePathPattern}`},
                            contextSize: {type: "integer", minimum: 16, maximum: 1048576}
                        }
                    }
                }
            }
        }
    }
} as const;
