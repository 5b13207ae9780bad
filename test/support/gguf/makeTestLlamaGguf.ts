import {GgufWriter, type TensorStorage} from "./GgufWriter.js";

export type TestLlamaGgufOptions = {
    nEmbd?: number,
    nLayers?: number,
    nHeads?: number,
    nKvHeads?: number,
    nFf?: number,
    contextLength?: number,
    /** Same options + same seed = byte-identical file. */
    seed?: number,
    /** `null` leaves out `tokenizer.chat_template` entirely. Defaults to {@link defaultTestChatTemplate}. */
    chatTemplate?: string | null,
    /** Additional normal pieces (`▁` marks a leading space); their prefixes are added too so the tokenizer can reach them. */
    extraVocab?: readonly string[],
    /**
     * Whole pieces added as user-defined tokens (llama.cpp matches them in text as one token, as Qwen3's `<think>` and
     * `</think>`), after the rest of the vocabulary.
     */
    userDefinedVocab?: readonly string[],
    /**
     * Whole pieces added as control tokens (special: rendered in a prompt, detokenized to nothing), after the
     * user-defined ones: a real model's `<|endoftext|>`, `[gMASK]`, gpt-oss's `<|end|>`...
     */
    controlVocab?: readonly string[],
    /**
     * A scripted model: after each `[from, to]` pair's `from` piece its greedy next token is `to` (pieces of the
     * vocabulary, `▁` for a leading space; `<|im_end|>` is EOS). The layers add nothing to the residual stream, so
     * the next token depends on the last one only: a script must not pass through a piece twice (it would loop).
     * Other pieces are followed as the random weights say.
     */
    script?: readonly (readonly [from: string, to: string])[],
    name?: string,
    /**
     * Adds fill-in-the-middle control tokens (`<|fim_prefix|>`, `<|fim_suffix|>`, `<|fim_middle|>`, Qwen2.5-Coder's
     * spelling) after the rest of the vocabulary, with their `tokenizer.ggml.fim_*_token_id` keys. Off by default, so
     * the other test models stay as they are.
     */
    fillInTheMiddle?: boolean,
    /** Storage of the weight matrices (norms stay f32). f16 halves the file and is how small models often ship. */
    weightStorage?: TensorStorage,
    /** `llama.pooling_type` (1 = mean: an embedding model, as GGUF embedding exports of decoder models declare it); absent by default. */
    poolingType?: number,
    /**
     * Scales what each layer adds to the residual stream (its attention output and FFN down projections), by layer.
     * 0 for every layer's attention makes a model whose next token depends on the current token only: it repeats
     * any passage of its own output it is shown (a copier, for prompt lookup). Small gains from some layer on make
     * the layers above barely change the output, so the same seed with fewer layers is a good draft model.
     */
    residualGain?: (layer: number, part: "attention" | "ffn") => number,
    /**
     * The model ends its turn by a margin no sampling setting overcomes: EOS is the most likely token after any token
     * (every token's embedding carries a large constant in dimension 0, which only EOS's output row reads).
     * `"at once"`: after the prompt too, so an answer is empty and costs one step (for clients that send no token
     * limit, such as Codex). `"after a token"`: except right after a line break, whose constant is the opposite, so
     * the first token of an answer (the generation prompt ends with a line break) is never EOS: an answer is a token
     * or a few, never empty (for clients that ask again after an empty answer, such as Claude Code).
     */
    endsTurn?: "at once" | "after a token"
};

/** ChatML template in the Qwen2.5 style, without tool support. */
export const defaultTestChatTemplate =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/**
 * The Qwen2.5 Instruct chat template (tools in the system prompt as `<tools>` JSON lines, assistant calls as
 * `<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>`, tool results as `<tool_response>` blocks in a user
 * turn), as published with Qwen2.5-0.5B-Instruct. Rendered by node-llama-cpp's Jinja wrapper (@huggingface/jinja).
 */
export const toolsChatTemplate = [
    "{%- if tools %}",
    "{{- '<|im_start|>system\\n' }}",
    "{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] }}",
    "{%- else %}{{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}{%- endif %}",
    "{{- \"\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>\" }}",
    "{%- for tool in tools %}{{- \"\\n\" }}{{- tool | tojson }}{%- endfor %}",
    "{{- \"\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\\"name\\\": <function-name>, \\\"arguments\\\": <args-json-object>}\\n</tool_call><|im_end|>\\n\" }}",
    "{%- else %}",
    "{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}",
    "{%- else %}{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}{%- endif %}",
    "{%- endif %}",
    "{%- for message in messages %}",
    "{%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) or (message.role == \"assistant\" and not message.tool_calls) %}",
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}",
    "{%- elif message.role == \"assistant\" %}",
    "{{- '<|im_start|>' + message.role }}",
    "{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}",
    "{%- for tool_call in message.tool_calls %}",
    "{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}",
    "{{- '\\n<tool_call>\\n{\"name\": \"' }}{{- tool_call.name }}{{- '\", \"arguments\": ' }}{{- tool_call.arguments | tojson }}{{- '}\\n</tool_call>' }}",
    "{%- endfor %}",
    "{{- '<|im_end|>\\n' }}",
    "{%- elif message.role == \"tool\" %}",
    "{%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != \"tool\") %}{{- '<|im_start|>user' }}{%- endif %}",
    "{{- '\\n<tool_response>\\n' }}{{- message.content }}{{- '\\n</tool_response>' }}",
    "{%- if loop.last or (messages[loop.index0 + 1].role != \"tool\") %}{{- '<|im_end|>\\n' }}{%- endif %}",
    "{%- endif %}",
    "{%- endfor %}",
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
].join("\n");

/** A `script` that writes `pieces` in order after the first: each piece followed by the next. */
export function scriptThrough(pieces: readonly string[]): [from: string, to: string][] {
    return pieces.slice(1).map((piece, index) => [pieces[index], piece]);
}

/** Normal vocabulary pieces that let a model write {@link toolsChatTemplate}'s call markup as whole tokens. */
export const toolCallVocab = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"] as const;

/**
 * Fixed ids of the control tokens. `eos` is what `tokenizer.ggml.eos_token_id` points at: ChatML models end a turn
 * with `<|im_end|>`, so that is the EOS token, while the SentencePiece `</s>` is only kept as a regular control token.
 */
export const testLlamaTokens = {
    unk: {id: 0, text: "<unk>"},
    bos: {id: 1, text: "<s>"},
    endOfSentence: {id: 2, text: "</s>"},
    imStart: {id: 3, text: "<|im_start|>"},
    imEnd: {id: 4, text: "<|im_end|>"},
    eos: {id: 4, text: "<|im_end|>"},
    padding: {id: 2, text: "</s>"},
    /** `<0x00>` has this id, `<0xFF>` has this id + 255. */
    firstByte: {id: 5, text: "<0x00>"}
} as const;

/** Roughly 50 MB of F32 weights, for benchmarks that need a model that does real (if meaningless) work. */
export const bench50mbOptions = {
    nEmbd: 512,
    nLayers: 4,
    nHeads: 8,
    nKvHeads: 4,
    nFf: 1376,
    contextLength: 4096,
    name: "test-llama-bench-50mb"
} as const satisfies TestLlamaGgufOptions;

// llama.cpp token types (enum llama_token_type)
const TOKEN_TYPE_NORMAL = 1;
const TOKEN_TYPE_UNKNOWN = 2;
const TOKEN_TYPE_CONTROL = 3;
const TOKEN_TYPE_USER_DEFINED = 4;
const TOKEN_TYPE_BYTE = 6;

const SPACE = "\u2581";

// Standard deviation of the output logits. ~3 over a ~1k vocab gives a top-1 probability of very roughly 0.1-0.4:
// sampling at temperature 1 stays varied, while greedy decoding still has a clear winner at every step.
const LOGIT_STD = 3;
// Larger than the usual 1/sqrt(fan_in) so attention is peaky and the context (not only the last token) steers the
// next token: 200 greedy tokens then have ~160 distinct ones instead of ~125, and no loop settles in.
const QK_GAIN = 2;
// Byte tokens get weaker output rows: random bytes decode to U+FFFD and control characters, so they should show up
// only now and then when sampling (and never greedily) rather than in every other token.
const BYTE_TOKEN_LOGIT_GAIN = 0.25;
// A scripted next token's logit: far above the random ones (std 3) and what the other script rows give it (their
// embeddings are nearly orthogonal to its own in nEmbd dimensions).
const SCRIPT_LOGIT = 60;
// `endsTurn`: dimension 0 of the residual stream stays near this (the layers add only a few units), so the
// normalized hidden state's dimension 0 is ~7 while the others are ~0.45; EOS's logit is then ~7 x the gain (~70),
// far above the best of the others (~5).
const END_OF_TURN_EMBEDDING = 16;
const END_OF_TURN_LOGIT_GAIN = 10;

// Enough common words that ordinary English tokenizes into multi-character pieces.
const words = `
the a an and or of to in on at for with from by as is it was be are were been not but if then else so no yes
this that these those there here what when where who how why which all some any each every other same than
i you he she we they me him her us them my your his its our their one two three four five ten first last next
new old good bad big small long short little great time day night year way man woman child people world life
hand part place case week story once upon lived girl boy cat dog bird house tree sun moon king queen
happy sad said say says go went come came see saw know knew think thought make made take took like love want give
use find found tell told ask work call try need feel look looked help play run walk talk
hello hi thanks thank please sorry ok okay assistant user system model answer question test json data text code
value key name list number string true false null object array error result output input request response server
function tool weather city today tomorrow very more most much many just only also well now about after before over
under into out up down again never always because can will would should could do does did have has had get got
`.trim().split(/\s+/);

const capitalizedWords = ["The", "A", "Once", "Hello", "Hi", "I", "It", "This", "What", "How", "Yes", "No", "World",
    "JSON", "You", "We", "He", "She", "They", "There", "Tell", "Write", "Say"];

const suffixes = ["ing", "ed", "er", "es", "ly", "ion", "tion", "s", "'s", "n't"];

// Pieces that show up in JSON / code output.
const symbolPieces = ["{\"", "\":", "\",", "\"}", "},", "\":\"", "[{", "}]", `${SPACE}"`, `${SPACE}{`, `${SPACE}}`,
    `${SPACE}[`, `${SPACE}(`, `${SPACE}-`, `${SPACE}=`, `${SPACE}0`, `${SPACE}1`, ".\n", "..", "..."];

/** Writes a small random-weight `llama` model with a SentencePiece (byte-fallback) tokenizer. */
export async function makeTestLlamaGguf(filePath: string, options: TestLlamaGgufOptions = {}): Promise<void> {
    const {
        nEmbd = 64,
        nLayers = 2,
        nHeads = 4,
        nKvHeads = 2,
        nFf = 128,
        contextLength = 2048,
        seed = 1,
        chatTemplate = defaultTestChatTemplate,
        extraVocab = [],
        name = "test-llama",
        weightStorage = "f32",
        fillInTheMiddle = false,
        userDefinedVocab = [],
        controlVocab = [],
        script = []
    } = options;

    if (nEmbd % nHeads !== 0)
        throw new Error(`nEmbd (${nEmbd}) must be divisible by nHeads (${nHeads})`);
    if (nHeads % nKvHeads !== 0)
        throw new Error(`nHeads (${nHeads}) must be divisible by nKvHeads (${nKvHeads})`);

    const headDim = nEmbd / nHeads;
    if (headDim % 2 !== 0)
        throw new Error(`The head dimension (${headDim}) must be even for RoPE`);

    const vocab = buildVocab(extraVocab, fillInTheMiddle, userDefinedVocab, controlVocab);
    const scripted = script.map(([from, to]) => [pieceId(vocab, from), pieceId(vocab, to)] as const);
    const nVocab = vocab.tokens.length;
    const nEmbdKv = headDim * nKvHeads;

    const writer = new GgufWriter()
        .addString("general.architecture", "llama")
        .addString("general.name", name)
        .addUint32("general.file_type", 0) // ALL_F32
        .addUint32("llama.context_length", contextLength)
        .addUint32("llama.embedding_length", nEmbd)
        .addUint32("llama.block_count", nLayers)
        .addUint32("llama.feed_forward_length", nFf)
        .addUint32("llama.attention.head_count", nHeads)
        .addUint32("llama.attention.head_count_kv", nKvHeads)
        .addUint32("llama.rope.dimension_count", headDim)
        .addFloat32("llama.rope.freq_base", 10000)
        .addFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5)
        .addUint32("llama.vocab_size", nVocab)
        .addString("tokenizer.ggml.model", "llama")
        .addStringArray("tokenizer.ggml.tokens", vocab.tokens)
        .addFloat32Array("tokenizer.ggml.scores", vocab.scores)
        .addInt32Array("tokenizer.ggml.token_type", vocab.types)
        .addUint32("tokenizer.ggml.bos_token_id", testLlamaTokens.bos.id)
        .addUint32("tokenizer.ggml.eos_token_id", testLlamaTokens.eos.id)
        .addUint32("tokenizer.ggml.unknown_token_id", testLlamaTokens.unk.id)
        .addUint32("tokenizer.ggml.padding_token_id", testLlamaTokens.padding.id)
        .addBool("tokenizer.ggml.add_bos_token", true)
        .addBool("tokenizer.ggml.add_eos_token", false)
        .addBool("tokenizer.ggml.add_space_prefix", true);
    if (fillInTheMiddle)
        for (const [key, text] of fimTokens)
            writer.addUint32(`tokenizer.ggml.${key}_token_id`, vocab.tokens.indexOf(text));

    if (chatTemplate != null)
        writer.addString("tokenizer.chat_template", chatTemplate);
    if (options.poolingType != null)
        writer.addUint32("llama.pooling_type", options.poolingType);

    const random = (tensorName: string, std: number) => fillRandom(seed, tensorName, std);
    const embeddings = new Float32Array(nEmbd * nVocab);
    random("token_embd.weight", 1)(embeddings);
    const ones = (target: Float32Array) => target.fill(1);
    const linear = (fanIn: number, gain = 1) => gain / Math.sqrt(fanIn);

    if (options.endsTurn != null)
        for (let id = 0; id < nVocab; id++)
            embeddings[id * nEmbd] += options.endsTurn === "after a token" && id === testLlamaTokens.firstByte.id + 0x0a ? -END_OF_TURN_EMBEDDING : END_OF_TURN_EMBEDDING;
    writer.addF32Tensor("token_embd.weight", [nEmbd, nVocab], (target) => target.set(embeddings), weightStorage);
    writer.addF32Tensor("output_norm.weight", [nEmbd], ones);
    writer.addF32Tensor("output.weight", [nEmbd, nVocab], (target) => {
        random("output.weight", linear(nEmbd, LOGIT_STD))(target);

        // A zero row pins a token's logit at 0, far below the best of ~1k random logits: greedy decoding never
        // picks a control token, so generations neither end nor emit `<s>` on their own (use token bias for that).
        for (const id of vocab.controlTokenIds)
            target.fill(0, id * nEmbd, (id + 1) * nEmbd);

        for (const id of vocab.byteTokenIds) {
            for (let i = id * nEmbd; i < (id + 1) * nEmbd; i++)
                target[i] *= BYTE_TOKEN_LOGIT_GAIN;
        }

        // With the layers silent the last hidden state is the normalized embedding of the last token, so adding it
        // (scaled) to the row of the token that is to follow gives that token a logit of SCRIPT_LOGIT after it.
        for (const [from, to] of scripted) {
            const embedding = embeddings.subarray(from * nEmbd, (from + 1) * nEmbd);
            const rms = Math.sqrt(embedding.reduce((sum, value) => sum + value * value, 0) / nEmbd);
            for (let i = 0; i < nEmbd; i++)
                target[to * nEmbd + i] += SCRIPT_LOGIT * embedding[i] / (nEmbd * rms);
        }
        if (options.endsTurn != null) {
            for (let id = 0; id < nVocab; id++)
                target[id * nEmbd] = 0;
            target[testLlamaTokens.eos.id * nEmbd] = END_OF_TURN_LOGIT_GAIN;
        }
    }, weightStorage);

    for (let layer = 0; layer < nLayers; layer++) {
        const blk = (tensor: string) => `blk.${layer}.${tensor}.weight`;

        writer.addF32Tensor(blk("attn_norm"), [nEmbd], ones);
        writer.addF32Tensor(blk("attn_q"), [nEmbd, nEmbd], random(blk("attn_q"), linear(nEmbd, QK_GAIN)), weightStorage);
        writer.addF32Tensor(blk("attn_k"), [nEmbd, nEmbdKv], random(blk("attn_k"), linear(nEmbd, QK_GAIN)), weightStorage);
        writer.addF32Tensor(blk("attn_v"), [nEmbd, nEmbdKv], random(blk("attn_v"), linear(nEmbd)), weightStorage);
        const gain = (part: "attention" | "ffn") => script.length > 0 ? 0 : options.residualGain?.(layer, part) ?? 1;
        writer.addF32Tensor(blk("attn_output"), [nEmbd, nEmbd], random(blk("attn_output"), linear(nEmbd, gain("attention"))), weightStorage);
        writer.addF32Tensor(blk("ffn_norm"), [nEmbd], ones);
        writer.addF32Tensor(blk("ffn_gate"), [nEmbd, nFf], random(blk("ffn_gate"), linear(nEmbd)), weightStorage);
        writer.addF32Tensor(blk("ffn_down"), [nFf, nEmbd], random(blk("ffn_down"), linear(nFf, gain("ffn"))), weightStorage);
        writer.addF32Tensor(blk("ffn_up"), [nEmbd, nFf], random(blk("ffn_up"), linear(nEmbd)), weightStorage);
    }

    await writer.write(filePath);
}

type Vocab = {
    tokens: string[],
    scores: number[],
    types: number[],
    controlTokenIds: number[],
    byteTokenIds: number[]
};

/** The fill-in-the-middle control tokens `fillInTheMiddle` adds, by their GGUF key. */
export const fimTokens = [["fim_pre", "<|fim_prefix|>"], ["fim_suf", "<|fim_suffix|>"], ["fim_mid", "<|fim_middle|>"]] as const;

function buildVocab(extraVocab: readonly string[], fillInTheMiddle = false, userDefinedVocab: readonly string[] = [], controlVocab: readonly string[] = []): Vocab {
    const vocab: Vocab = {tokens: [], scores: [], types: [], controlTokenIds: [], byteTokenIds: []};
    const ids = new Map<string, number>();
    const add = (piece: string, type: number, score: number) => {
        if (ids.has(piece))
            return;

        ids.set(piece, vocab.tokens.length);
        if (type === TOKEN_TYPE_BYTE)
            vocab.byteTokenIds.push(vocab.tokens.length);
        else if (type !== TOKEN_TYPE_NORMAL)
            vocab.controlTokenIds.push(vocab.tokens.length);

        vocab.tokens.push(piece);
        vocab.scores.push(score);
        vocab.types.push(type);
    };

    add(testLlamaTokens.unk.text, TOKEN_TYPE_UNKNOWN, 0);
    for (const token of [testLlamaTokens.bos, testLlamaTokens.endOfSentence, testLlamaTokens.imStart, testLlamaTokens.imEnd]) {
        if (vocab.tokens.length !== token.id)
            throw new Error(`Special token ${token.text} would get id ${vocab.tokens.length} instead of ${token.id}`);

        add(token.text, TOKEN_TYPE_CONTROL, 0);
    }

    // llama.cpp looks byte tokens up by this exact spelling (uppercase hex) for byte fallback.
    for (let byte = 0; byte < 256; byte++)
        add(`<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`, TOKEN_TYPE_BYTE, 0);

    // SentencePiece merges the adjacent pair whose merged piece has the highest score, and only into pieces that
    // exist; so every piece comes with all its prefixes, and longer pieces score higher to make merging greedy.
    const addWithPrefixes = (piece: string) => {
        const chars = [...piece];
        for (let length = 1; length <= chars.length; length++)
            add(chars.slice(0, length).join(""), TOKEN_TYPE_NORMAL, length - ids.size * 1e-4);
    };

    addWithPrefixes(SPACE);
    for (let code = 0x21; code <= 0x7e; code++)
        addWithPrefixes(String.fromCharCode(code));

    for (const word of [...words, ...capitalizedWords])
        addWithPrefixes(SPACE + word);

    for (const piece of [...suffixes, ...symbolPieces, ...extraVocab])
        addWithPrefixes(piece);

    if (fillInTheMiddle)
        for (const [, text] of fimTokens)
            add(text, TOKEN_TYPE_CONTROL, 0);
    for (const piece of userDefinedVocab)
        add(piece, TOKEN_TYPE_USER_DEFINED, 0);
    for (const piece of controlVocab)
        add(piece, TOKEN_TYPE_CONTROL, 0);

    return vocab;
}

function pieceId(vocab: Vocab, piece: string): number {
    const id = vocab.tokens.indexOf(piece);
    if (id === -1)
        throw new Error(`The script's piece ${JSON.stringify(piece)} is not in the vocabulary`);
    return id;
}

/** A fill function with deterministic, zero-mean, "normal-ish" (triangular) values of standard deviation `std`. */
/** Fills a tensor with seeded random values of standard deviation `std` (triangular), seeded by its name. */
export function fillRandom(seed: number, tensorName: string, std: number) {
    return (target: Float32Array) => {
        // Seeded per tensor so a tensor's values don't depend on the size or order of the tensors before it.
        let state = hashString(tensorName, seed);

        // The sum of two uniform 16-bit halves is triangular on (-1, 1) with variance 1/6.
        const scale = std * Math.sqrt(6) / 65536;
        for (let i = 0; i < target.length; i++) {
            // mulberry32
            state = (state + 0x6d2b79f5) | 0;
            let t = Math.imul(state ^ (state >>> 15), 1 | state);
            t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
            t = (t ^ (t >>> 14)) >>> 0;

            target[i] = ((t & 0xffff) + (t >>> 16) - 65535) * scale;
        }
    };
}

/** FNV-1a, mixed with the seed. */
function hashString(text: string, seed: number) {
    let hash = (0x811c9dc5 ^ Math.imul(seed | 0, 0x9e3779b1)) >>> 0;
    for (let i = 0; i < text.length; i++)
        hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);

    return hash >>> 0;
}
