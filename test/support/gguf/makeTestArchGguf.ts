import {GgufWriter} from "./GgufWriter.js";
import {fillRandom} from "./makeTestLlamaGguf.js";

/**
 * A small random-weight `mamba` model (a recurrent state instead of a KV cache: llama.cpp cannot remove its last
 * token, `llama_memory_seq_rm` of a tail fails), with a plain SentencePiece byte-fallback vocabulary
 * (`<unk>`, `<s>`, `</s>` as EOS, the 256 bytes, the printable ASCII characters and a few words).
 */
export async function makeTestMambaGguf(filePath: string, {nEmbd = 64, nLayers = 2, seed = 1} = {}): Promise<void> {
    const dInner = 2 * nEmbd; // llama.cpp supports an expansion factor of 2 only
    const dConv = 4;
    const dState = 16;
    const dtRank = Math.ceil(nEmbd / 16);
    const {tokens, scores, types} = smallVocab();
    const nVocab = tokens.length;

    const writer = new GgufWriter()
        .addString("general.architecture", "mamba")
        .addString("general.name", "test-mamba")
        .addUint32("general.file_type", 0)
        .addUint32("mamba.context_length", 1 << 20)
        .addUint32("mamba.embedding_length", nEmbd)
        .addUint32("mamba.block_count", nLayers)
        .addUint32("mamba.feed_forward_length", 0)
        .addUint32("mamba.attention.head_count", 0)
        .addFloat32("mamba.attention.layer_norm_rms_epsilon", 1e-5)
        .addUint32("mamba.ssm.conv_kernel", dConv)
        .addUint32("mamba.ssm.inner_size", dInner)
        .addUint32("mamba.ssm.state_size", dState)
        .addUint32("mamba.ssm.time_step_rank", dtRank)
        .addUint32("mamba.vocab_size", nVocab);
    addVocab(writer, tokens, scores, types);

    const random = (name: string, std: number) => fillRandom(seed, name, std);
    const ones = (target: Float32Array) => target.fill(1);
    writer.addF32Tensor("token_embd.weight", [nEmbd, nVocab], random("token_embd.weight", 1));
    writer.addF32Tensor("output_norm.weight", [nEmbd], ones);
    writer.addF32Tensor("output.weight", [nEmbd, nVocab], outputRows(random, nEmbd));
    for (let layer = 0; layer < nLayers; layer++) {
        const name = (tensor: string) => `blk.${layer}.${tensor}`;
        writer.addF32Tensor(name("attn_norm.weight"), [nEmbd], ones);
        writer.addF32Tensor(name("ssm_in.weight"), [nEmbd, 2 * dInner], random(name("ssm_in.weight"), 1 / Math.sqrt(nEmbd)));
        writer.addF32Tensor(name("ssm_conv1d.weight"), [dConv, dInner], random(name("ssm_conv1d.weight"), 0.5));
        writer.addF32Tensor(name("ssm_conv1d.bias"), [dInner], random(name("ssm_conv1d.bias"), 0.1));
        writer.addF32Tensor(name("ssm_x.weight"), [dInner, dtRank + 2 * dState], random(name("ssm_x.weight"), 1 / Math.sqrt(dInner)));
        writer.addF32Tensor(name("ssm_dt.weight"), [dtRank, dInner], random(name("ssm_dt.weight"), 1 / Math.sqrt(dtRank)));
        writer.addF32Tensor(name("ssm_dt.bias"), [dInner], (target) => target.fill(-2));
        // A = -exp(A_log): negative, so the state decays (as the converter stores it)
        writer.addF32Tensor(name("ssm_a"), [dState, dInner], (target) => {
            for (let i = 0; i < target.length; i++)
                target[i] = -((i % dState) + 1);
        });
        writer.addF32Tensor(name("ssm_d"), [dInner], ones);
        // Strong enough that the state (the whole history, not only the last token) steers the next token
        writer.addF32Tensor(name("ssm_out.weight"), [dInner, nEmbd], random(name("ssm_out.weight"), 2 / Math.sqrt(dInner)));
    }

    await writer.write(filePath);
}

/**
 * A small random-weight `gemma2` model: every other layer's attention is a sliding window of `slidingWindow` tokens, so
 * node-llama-cpp's sequences need checkpoints (`needsCheckpoints`, unless the context keeps a full SWA cache).
 */
export async function makeTestGemma2Gguf(filePath: string, {nEmbd = 64, nLayers = 2, nHeads = 4, nKvHeads = 2, nFf = 128, slidingWindow = 8, seed = 1} = {}): Promise<void> {
    const {tokens, scores, types} = smallVocab();
    const nVocab = tokens.length;
    const headDim = nEmbd / nHeads;
    const writer = new GgufWriter()
        .addString("general.architecture", "gemma2")
        .addString("general.name", "test-gemma2")
        .addUint32("general.file_type", 0)
        .addUint32("gemma2.context_length", 4096)
        .addUint32("gemma2.embedding_length", nEmbd)
        .addUint32("gemma2.block_count", nLayers)
        .addUint32("gemma2.feed_forward_length", nFf)
        .addUint32("gemma2.attention.head_count", nHeads)
        .addUint32("gemma2.attention.head_count_kv", nKvHeads)
        .addUint32("gemma2.attention.key_length", headDim)
        .addUint32("gemma2.attention.value_length", headDim)
        .addFloat32("gemma2.attention.layer_norm_rms_epsilon", 1e-6)
        .addUint32("gemma2.attention.sliding_window", slidingWindow)
        .addFloat32("gemma2.attn_logit_softcapping", 50)
        .addFloat32("gemma2.final_logit_softcapping", 30)
        .addUint32("gemma2.vocab_size", nVocab);
    addVocab(writer, tokens, scores, types);

    const random = (name: string, std: number) => fillRandom(seed, name, std);
    // gemma's RMS norms multiply by (1 + weight): zero weights are plain norms
    const zeros = (target: Float32Array) => target.fill(0);
    // tied output: the embeddings are the output rows too (scaled by sqrt(nEmbd) on the way in)
    writer.addF32Tensor("token_embd.weight", [nEmbd, nVocab], outputRows(random, nEmbd));
    writer.addF32Tensor("output_norm.weight", [nEmbd], zeros);
    const linear = (fanIn: number, gain = 1) => gain / Math.sqrt(fanIn);
    for (let layer = 0; layer < nLayers; layer++) {
        const blk = (tensor: string) => `blk.${layer}.${tensor}.weight`;
        writer.addF32Tensor(blk("attn_norm"), [nEmbd], zeros);
        writer.addF32Tensor(blk("attn_q"), [nEmbd, nEmbd], random(blk("attn_q"), linear(nEmbd, 2)));
        writer.addF32Tensor(blk("attn_k"), [nEmbd, headDim * nKvHeads], random(blk("attn_k"), linear(nEmbd, 2)));
        writer.addF32Tensor(blk("attn_v"), [nEmbd, headDim * nKvHeads], random(blk("attn_v"), linear(nEmbd)));
        writer.addF32Tensor(blk("attn_output"), [nEmbd, nEmbd], random(blk("attn_output"), linear(nEmbd)));
        writer.addF32Tensor(blk("post_attention_norm"), [nEmbd], zeros);
        writer.addF32Tensor(blk("ffn_norm"), [nEmbd], zeros);
        writer.addF32Tensor(blk("ffn_gate"), [nEmbd, nFf], random(blk("ffn_gate"), linear(nEmbd)));
        writer.addF32Tensor(blk("ffn_up"), [nEmbd, nFf], random(blk("ffn_up"), linear(nEmbd)));
        writer.addF32Tensor(blk("ffn_down"), [nFf, nEmbd], random(blk("ffn_down"), linear(nFf)));
        writer.addF32Tensor(blk("post_ffw_norm"), [nEmbd], zeros);
    }
    await writer.write(filePath);
}

/** Output rows whose logits spread (std ~3); the control tokens' rows zero: EOS never wins, generations run to the limit. */
function outputRows(random: (name: string, std: number) => (target: Float32Array) => void, nEmbd: number) {
    return (target: Float32Array) => {
        random("output.weight", 3 / Math.sqrt(nEmbd))(target);
        for (const id of [0, 1, 2])
            target.fill(0, id * nEmbd, (id + 1) * nEmbd);
    };
}

function addVocab(writer: GgufWriter, tokens: string[], scores: number[], types: number[]) {
    writer
        .addString("tokenizer.ggml.model", "llama")
        .addStringArray("tokenizer.ggml.tokens", tokens)
        .addFloat32Array("tokenizer.ggml.scores", scores)
        .addInt32Array("tokenizer.ggml.token_type", types)
        .addUint32("tokenizer.ggml.bos_token_id", 1)
        .addUint32("tokenizer.ggml.eos_token_id", 2)
        .addUint32("tokenizer.ggml.unknown_token_id", 0)
        .addBool("tokenizer.ggml.add_bos_token", true)
        .addBool("tokenizer.ggml.add_eos_token", false)
        .addBool("tokenizer.ggml.add_space_prefix", true);
}

/** `<unk>`, `<s>`, `</s>` (EOS), the 256 bytes, the printable ASCII characters and a few words (SentencePiece, byte fallback). */
function smallVocab() {
    const tokens: string[] = ["<unk>", "<s>", "</s>"];
    const types: number[] = [2, 3, 3];
    for (let byte = 0; byte < 256; byte++) {
        tokens.push(`<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`);
        types.push(6);
    }
    const seen = new Set(tokens);
    const addPiece = (piece: string) => {
        const chars = [...piece];
        for (let length = 1; length <= chars.length; length++) {
            const prefix = chars.slice(0, length).join("");
            if (seen.has(prefix))
                continue;
            seen.add(prefix);
            tokens.push(prefix);
            types.push(1);
        }
    };
    addPiece("\u2581");
    for (let code = 0x21; code <= 0x7e; code++)
        addPiece(String.fromCharCode(code));
    for (const word of "the a and of to in it was once upon time little dog cat sun moon day there girl boy said happy big".split(" "))
        addPiece(`\u2581${word}`);
    const scores = tokens.map((piece, id) => types[id] === 1 ? [...piece].length - id * 1e-4 : 0);
    return {tokens, scores, types};
}
