import { poolingModes } from "../capabilities/embeddings/onnx/pooling.js";
import { modelTasks } from "./ModelEntry.js";

/** transformers.js dtypes (each selects a file name suffix in the model's onnx/ folder). */
export const onnxDtypes = ["fp32", "fp16", "q8", "int8", "uint8", "q4", "bnb4", "q4f16"] as const;

/**
 * JSON schema of `models.json`. Unknown keys are rejected so a typo (`contextsize`) is an error at
 * startup rather than a silently ignored setting.
 */
export const manifestSchema = {
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
                properties: {
                    id: {type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._:/+-]*$", maxLength: 200},
                    task: {enum: [...modelTasks]},
                    path: {type: "string", minLength: 1},
                    family: {type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._:/+-]*$", maxLength: 200},
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
                    // Embeddings models only (see README "Embeddings").
                    maxInputTokens: {type: "integer", minimum: 1, maximum: 1048576},
                    pooling: {enum: [...poolingModes]},
                    normalize: {type: "boolean"},
                    matryoshka: {
                        type: ["boolean", "array"],
                        minItems: 1,
                        uniqueItems: true,
                        items: {type: "integer", minimum: 1, maximum: 65536}
                    },
                    dtype: {enum: [...onnxDtypes]},
                    onnxFile: {type: "string", pattern: "^[^/\\\\]+\\.onnx$"}
                }
            }
        }
    }
} as const;
