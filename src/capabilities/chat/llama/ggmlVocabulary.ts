import type { LlamaModel } from "node-llama-cpp";

/** llama.cpp's token types (`tokenizer.ggml.token_type`), those read here. */
export const ggmlTokenType = {normal: 1, control: 3, byte: 6} as const;

/** A GGUF model's vocabulary as its metadata holds it: the tokenizer kind (`llama`, `gpt2`...), the pieces, their types. */
export type GgmlVocabulary = {model?: string, tokens?: string[], token_type?: number[]};

/** The model's `tokenizer.ggml` metadata; undefined when the file has none. */
export function ggmlVocabulary(model: LlamaModel): GgmlVocabulary | undefined {
    return model.fileInfo.metadata.tokenizer?.ggml as GgmlVocabulary | undefined;
}
