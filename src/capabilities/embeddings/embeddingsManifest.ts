import { ManifestFieldError } from "../../core/registry/ManifestFieldError.js";
import type { ManifestSettings } from "../../core/registry/ManifestSettings.js";
import { onnxDtypes } from "../../runtimes/onnx/onnxDtypes.js";
import { poolingModes, type Pooling } from "./onnx/pooling.js";


/** Manifest fields of an embeddings model, with defaults applied (README "Embeddings"). */
export type EmbeddingSettings = {
    /** Longest accepted input in tokens; null = the model's own limit. */
    maxInputTokens: number | null;
    /** How token vectors become one vector (ONNX models; GGUF models pool as the file says). */
    pooling: Pooling;
    /** L2-normalise the vectors (default true). */
    normalize: boolean;
    /** Whether `dimensions` may shorten the vectors: false, true (any size) or the allowed sizes. */
    matryoshka: boolean | number[];
    /** transformers.js dtype of the ONNX file (`fp32` = onnx/model.onnx, `q8` = onnx/model_quantized.onnx, ...); null = whichever file is there. */
    dtype: string | null;
    /** An ONNX file in the folder's `onnx/` to use instead (e.g. `model_O4.onnx`). */
    onnxFile: string | null;
};

type Fields = {maxInputTokens?: number, pooling?: Pooling, normalize?: boolean, matryoshka?: boolean | number[], dtype?: string, onnxFile?: string};

export const embeddingsManifest: ManifestSettings<EmbeddingSettings> = {
    properties: {
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
    },
    parse(fields: Fields, entry) {
        if (entry.path.endsWith(".gguf"))
            for (const field of ["pooling", "dtype", "onnxFile"] as const)
                if (fields[field] != null)
                    throw new ManifestFieldError(field, "does not apply to a GGUF model (llama.cpp pools as the GGUF itself says); leave it out.");
        if (fields.onnxFile != null && fields.dtype != null)
            throw new ManifestFieldError("onnxFile", "names the file itself; leave out 'dtype'.");
        return {
            maxInputTokens: fields.maxInputTokens ?? null,
            pooling: fields.pooling ?? "mean",
            normalize: fields.normalize ?? true,
            matryoshka: fields.matryoshka ?? false,
            dtype: fields.dtype ?? null,
            onnxFile: fields.onnxFile ?? null
        };
    }
};
