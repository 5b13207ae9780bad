/** GPT-2's byte-to-character table of byte-level BPE: printable bytes map to themselves, the others to U+0100 on. */
export const byteCharacters = (() => {
    const printable = (byte: number) => (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
    let next = 256;
    return Array.from({length: 256}, (_, byte) => String.fromCodePoint(printable(byte) ? byte : next++));
})();

/**
 * A tokenizer.json of a byte-level BPE vocabulary of the 256 bytes alone (ids 0-255, no merges), with `added` as its
 * special tokens: what the generated Whisper and SmolVLM models' tokenizers are.
 */
export function byteLevelTokenizerJson(added: readonly {id: number, content: string}[]): string {
    return JSON.stringify({
        version: "1.0", truncation: null, padding: null,
        added_tokens: added.map(({id, content}) => ({id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true})),
        normalizer: null,
        pre_tokenizer: {type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true},
        post_processor: null,
        decoder: {type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true},
        model: {
            type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "", fuse_unk: false, byte_fallback: false,
            vocab: Object.fromEntries(byteCharacters.map((character, index) => [character, index])), merges: []
        }
    });
}
