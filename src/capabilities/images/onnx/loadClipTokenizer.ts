import fs from "node:fs";
import path from "node:path";
import { AutoTokenizer, CLIPTokenizer, type PreTrainedTokenizer } from "@huggingface/transformers";

/**
 * The CLIP tokenizer of a diffusers folder (`<model>/tokenizer/`), through transformers.js.
 *
 * With `tokenizer.json` it is loaded as it is. Many real SD exports ship only the slow tokenizer's
 * `vocab.json` + `merges.txt`, which transformers.js cannot read; for those the `tokenizer.json`
 * Hugging Face's `CLIPTokenizerFast` conversion would write (transformers' `CLIPConverter`: NFC,
 * whitespace collapse, lowercase; CLIP's split regex; byte-level symbols; BPE with `</w>` word ends;
 * `<|startoftext|> ... <|endoftext|>`) is built in memory from those files and handed to
 * transformers.js's `CLIPTokenizer`, so both layouts tokenize identically.
 */
export async function loadClipTokenizer(modelFolder: string): Promise<PreTrainedTokenizer> {
    const folder = path.join(modelFolder, "tokenizer");
    if (fs.existsSync(path.join(folder, "tokenizer.json")))
        return AutoTokenizer.from_pretrained(folder, {local_files_only: true});
    const read = (name: string) => fs.readFileSync(path.join(folder, name), "utf8");
    const config = fs.existsSync(path.join(folder, "tokenizer_config.json")) ? JSON.parse(read("tokenizer_config.json")) as Record<string, unknown> : {};
    const vocabulary = JSON.parse(read("vocab.json")) as Record<string, number>;
    const merges = read("merges.txt").split("\n")
        .filter((line, index) => line.trim() !== "" && !(index === 0 && line.startsWith("#version")));
    return new CLIPTokenizer(clipTokenizerJson(vocabulary, merges, config), {
        ...config,
        bos_token: tokenContent(config.bos_token) ?? "<|startoftext|>",
        eos_token: tokenContent(config.eos_token) ?? "<|endoftext|>",
        unk_token: tokenContent(config.unk_token) ?? "<|endoftext|>",
        pad_token: tokenContent(config.pad_token) ?? "<|endoftext|>",
        model_max_length: typeof config.model_max_length === "number" ? config.model_max_length : 77
    });
}

/** Tokens in tokenizer_config.json are strings or AddedToken objects ({content, ...}). */
function tokenContent(value: unknown): string | null {
    if (typeof value === "string")
        return value;
    if (value != null && typeof value === "object" && typeof (value as {content?: unknown}).content === "string")
        return (value as {content: string}).content;
    return null;
}

function clipTokenizerJson(vocabulary: Record<string, number>, merges: string[], config: Record<string, unknown>) {
    const bos = tokenContent(config.bos_token) ?? "<|startoftext|>";
    const eos = tokenContent(config.eos_token) ?? "<|endoftext|>";
    const unk = tokenContent(config.unk_token) ?? eos;
    const id = (token: string) => {
        const found = vocabulary[token];
        if (found == null)
            throw new Error(`CLIP tokenizer: '${token}' is not in vocab.json`);
        return found;
    };
    // Only the two specials: SD2's pad token "!" must stay an ordinary vocabulary entry ("hi!" ends in "!</w>").
    const added = [bos, eos];
    return {
        version: "1.0",
        truncation: null,
        padding: null,
        added_tokens: added.map((content) => ({
            id: id(content), content, single_word: false, lstrip: false, rstrip: false, normalized: false,
            special: true
        })),
        normalizer: {type: "Sequence", normalizers: [{type: "NFC"}, {type: "Replace", pattern: {Regex: "\\s+"}, content: " "}, {type: "Lowercase"}]},
        pre_tokenizer: {
            type: "Sequence",
            pretokenizers: [
                {type: "Split", pattern: {Regex: "<\\|startoftext\\|>|<\\|endoftext\\|>|'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+"}, behavior: "Removed", invert: true},
                {type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false}
            ]
        },
        post_processor: {type: "RobertaProcessing", sep: [eos, id(eos)], cls: [bos, id(bos)], trim_offsets: false, add_prefix_space: false},
        decoder: {type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true},
        model: {
            type: "BPE", dropout: null, unk_token: unk, continuing_subword_prefix: "", end_of_word_suffix: "</w>",
            fuse_unk: false, byte_fallback: false, vocab: vocabulary, merges
        }
    };
}
