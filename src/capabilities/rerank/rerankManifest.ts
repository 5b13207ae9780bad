import { ManifestFieldError } from "../../core/registry/ManifestFieldError.js";
import type { ManifestSettings } from "../../core/registry/ManifestSettings.js";
import { onnxDtypes } from "../../runtimes/onnx/onnxDtypes.js";

/** Manifest fields of a reranker, with defaults applied (docs/rerank.md). */
export type RerankSettings = {
    /** Longest accepted (query, document) pair in tokens; null = the model's own limit. */
    maxInputTokens: number | null;
    /** transformers.js dtype of the ONNX file (`fp32` = onnx/model.onnx, `q8` = onnx/model_quantized.onnx, ...); null = whichever file is there. */
    dtype: string | null;
    /** An ONNX file in the folder's `onnx/` to use instead. */
    onnxFile: string | null;
};

type Fields = {maxInputTokens?: number, dtype?: string, onnxFile?: string};

export const rerankManifest: ManifestSettings<RerankSettings> = {
    properties: {
        maxInputTokens: {type: "integer", minimum: 1, maximum: 1048576},
        dtype: {enum: [...onnxDtypes]},
        onnxFile: {type: "string", pattern: "^[^/\\\\]+\\.onnx$"}
    },
    parse(fields: Fields, entry) {
        if (entry.path.endsWith(".gguf"))
            for (const field of ["dtype", "onnxFile"] as const)
                if (fields[field] != null)
                    throw new ManifestFieldError(field, "does not apply to a GGUF model; leave it out.");
        if (fields.onnxFile != null && fields.dtype != null)
            throw new ManifestFieldError("onnxFile", "names the file itself; leave out 'dtype'.");
        return {maxInputTokens: fields.maxInputTokens ?? null, dtype: fields.dtype ?? null, onnxFile: fields.onnxFile ?? null};
    }
};
