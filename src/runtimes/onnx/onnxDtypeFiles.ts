import fs from "node:fs";
import path from "node:path";

/**
 * File name suffix in a model's onnx/ folder of each dtype: transformers.js 4's own table
 * (src/utils/dtypes.js DEFAULT_DTYPE_SUFFIX_MAPPING, for the dtypes of `onnxDtypes`), plus q8f16 and
 * uint8f16, files the Kokoro-82M ONNX export ships that transformers.js has no dtype for (speech
 * loads them by file name).
 */
const suffixes: Readonly<Record<string, string>> = {
    fp32: "", fp16: "_fp16", q8: "_quantized", int8: "_int8", uint8: "_uint8", q4: "_q4", q4f16: "_q4f16", bnb4: "_bnb4",
    q8f16: "_q8f16", uint8f16: "_uint8f16"
};

/**
 * Which ONNX files of a model folder a dtype selects: `onnx/<stem><suffix>.onnx` for each of the
 * model's file stems (`model`; Whisper's `encoder_model` and `decoder_model_merged`).
 */
export const onnxDtypeFiles = {
    /** The file name suffix of `dtype` ("" for fp32, and for a name not in the table). */
    suffix(dtype: string): string {
        return suffixes[dtype] ?? "";
    },

    /** The files `dtype` selects, one per stem. */
    files(folder: string, stems: readonly string[], dtype: string): string[] {
        return stems.map((stem) => path.join(folder, "onnx", `${stem}${onnxDtypeFiles.suffix(dtype)}.onnx`));
    },

    /** Whether every file `dtype` selects exists. */
    exist(folder: string, stems: readonly string[], dtype: string): boolean {
        return onnxDtypeFiles.files(folder, stems, dtype).every((file) => fs.existsSync(file));
    },

    /** The first dtype of `order` (the capability's preference when the manifest names none) whose files all exist; null when none does. */
    find(folder: string, stems: readonly string[], order: readonly string[]): string | null {
        return order.find((dtype) => onnxDtypeFiles.exist(folder, stems, dtype)) ?? null;
    }
};
