import { testBertVocabulary } from "../onnx/makeTestBertOnnx.js";
import { GgufWriter } from "./GgufWriter.js";
import { fillRandom } from "./makeTestLlamaGguf.js";

export type TestBertRerankerOptions = {
    seed?: number;
    nEmbd?: number;
    nLayers?: number;
    nHeads?: number;
    nFf?: number;
    /** `bert.context_length`: the longest pair the reranker takes. */
    contextLength?: number;
};

/**
 * Writes a tiny random-weight BERT cross-encoder GGUF as llama.cpp's convert_hf_to_gguf.py writes a reranker
 * (bge-reranker-base, ms-marco-MiniLM): `general.architecture` bert, `bert.pooling_type` 4 (rank), the classification
 * head `cls.*` (dense + tanh) and `cls.output.*` (one relevance logit), a WordPiece (`bert`) vocabulary in phantom-space
 * form ([CLS] as BOS, [SEP] as separator), two token types. node-llama-cpp's ranking context and llama-server's
 * /v1/rerank both load it; the vocabulary is the ONNX test BERT's (makeTestBertOnnx).
 */
export async function makeTestBertRerankerGguf(filePath: string, options: TestBertRerankerOptions = {}): Promise<void> {
    const {seed = 1, nEmbd = 32, nLayers = 2, nHeads = 2, nFf = 64, contextLength = 512} = options;
    const vocabulary = testBertVocabulary();
    const control = (token: string) => /^\[[A-Z]+\]$/.test(token);
    // Phantom space: a word-initial piece starts with U+2581, a `##` continuation loses its `##`.
    // A word that is also a letter ("a") is in the vocabulary twice; llama.cpp needs each text once: the second is unused.
    const seen = new Set<string>();
    const tokens = vocabulary.map((token, index) => {
        const text = control(token) ? token : token.startsWith("##") ? token.slice(2) : `\u2581${token}`;
        if (seen.has(text))
            return `[unused${index}]`;
        seen.add(text);
        return text;
    });
    const id = (token: string) => vocabulary.indexOf(token);

    const writer = new GgufWriter()
        .addString("general.architecture", "bert")
        .addString("general.name", "test-bert-reranker")
        .addUint32("general.file_type", 0)
        .addUint32("bert.context_length", contextLength)
        .addUint32("bert.embedding_length", nEmbd)
        .addUint32("bert.block_count", nLayers)
        .addUint32("bert.feed_forward_length", nFf)
        .addUint32("bert.attention.head_count", nHeads)
        .addFloat32("bert.attention.layer_norm_epsilon", 1e-12)
        .addBool("bert.attention.causal", false)
        .addUint32("bert.pooling_type", 4)
        .addString("tokenizer.ggml.model", "bert")
        .addStringArray("tokenizer.ggml.tokens", tokens)
        .addInt32Array("tokenizer.ggml.token_type", tokens.map((token) => control(token) || token.startsWith("[unused") ? 3 : 1))
        .addUint32("tokenizer.ggml.token_type_count", 2)
        .addUint32("tokenizer.ggml.bos_token_id", id("[CLS]"))
        .addUint32("tokenizer.ggml.cls_token_id", id("[CLS]"))
        .addUint32("tokenizer.ggml.seperator_token_id", id("[SEP]"))
        .addUint32("tokenizer.ggml.unknown_token_id", id("[UNK]"))
        .addUint32("tokenizer.ggml.padding_token_id", id("[PAD]"))
        .addUint32("tokenizer.ggml.mask_token_id", id("[MASK]"));

    const random = (name: string, std: number) => fillRandom(seed, name, std);
    const ones = (target: Float32Array) => target.fill(1);
    const zeros = () => {};
    const linear = (fanIn: number) => 1 / Math.sqrt(fanIn);
    writer.addF32Tensor("token_embd.weight", [nEmbd, vocabulary.length], random("token_embd.weight", 1));
    writer.addF32Tensor("token_types.weight", [nEmbd, 2], random("token_types.weight", 0.5));
    writer.addF32Tensor("position_embd.weight", [nEmbd, contextLength], random("position_embd.weight", 0.1));
    writer.addF32Tensor("token_embd_norm.weight", [nEmbd], ones);
    writer.addF32Tensor("token_embd_norm.bias", [nEmbd], zeros);
    for (let layer = 0; layer < nLayers; layer++) {
        const blk = (tensor: string, kind = "weight") => `blk.${layer}.${tensor}.${kind}`;
        for (const name of ["attn_q", "attn_k", "attn_v", "attn_output"]) {
            writer.addF32Tensor(blk(name), [nEmbd, nEmbd], random(blk(name), linear(nEmbd)));
            writer.addF32Tensor(blk(name, "bias"), [nEmbd], zeros);
        }
        writer.addF32Tensor(blk("attn_output_norm"), [nEmbd], ones);
        writer.addF32Tensor(blk("attn_output_norm", "bias"), [nEmbd], zeros);
        writer.addF32Tensor(blk("ffn_up"), [nEmbd, nFf], random(blk("ffn_up"), linear(nEmbd)));
        writer.addF32Tensor(blk("ffn_up", "bias"), [nFf], zeros);
        writer.addF32Tensor(blk("ffn_down"), [nFf, nEmbd], random(blk("ffn_down"), linear(nFf)));
        writer.addF32Tensor(blk("ffn_down", "bias"), [nEmbd], zeros);
        writer.addF32Tensor(blk("layer_output_norm"), [nEmbd], ones);
        writer.addF32Tensor(blk("layer_output_norm", "bias"), [nEmbd], zeros);
    }
    writer.addF32Tensor("cls.weight", [nEmbd, nEmbd], random("cls.weight", linear(nEmbd)));
    writer.addF32Tensor("cls.bias", [nEmbd], zeros);
    // A spread of logits (a few units either way), so documents' scores differ clearly.
    writer.addF32Tensor("cls.output.weight", [nEmbd, 1], random("cls.output.weight", 3 * linear(nEmbd)));
    writer.addF32Tensor("cls.output.bias", [1], zeros);
    await writer.write(filePath);
}
