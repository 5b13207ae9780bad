import { encodeModel, float, int64, node, tensor, valueInfo } from "./onnxGraphBuilder.js";

/**
 * The dimensions of SmolVLM-256M-Instruct (HuggingFaceTB's config.json): a SigLIP base-patch16-512 vision tower (hidden
 * 768, 12 layers of 12 heads, MLP 3072, 512 px tiles of 16 px patches: 1024 patches), a pixel shuffle of scale 4
 * (64 image tokens of 768 x 16) and a connector to the SmolLM2-135M decoder (hidden 576, 30 layers, 9 query heads and
 * 3 key/value heads of 64, MLP 1536, 49,280 logits).
 */
export const smolVlm256mShape = {
    visionHidden: 768, visionLayers: 12, visionHeads: 12, visionMlp: 3072, tile: 512, patch: 16, scaleFactor: 4,
    hidden: 576, layers: 30, heads: 9, kvHeads: 3, headDim: 64, mlp: 1536, vocab: 49_280
} as const;

export type SmolVlmShape = typeof smolVlm256mShape;

/**
 * The three networks of a random-weight model of `shape`'s size, for speed only: the matrix products of the real
 * model's layers (attention with its heads, key/value heads and cache, the MLPs, the patch convolution, the pixel
 * shuffle, the connector and the 49,280 logits), without its norms, rotary positions or causal mask (cheap beside the
 * products; the output means nothing either way). Logits past the tokenizer's `inVocab` ids, and `endId`, are pushed
 * down, so the answer decodes and runs to `max_tokens`.
 */
export function smolVlmSizedNetworks(shape: SmolVlmShape, inVocab: number, endId: number, random: () => number) {
    const weights = (name: string, rows: number, columns: number) =>
        tensor(name, [rows, columns], Float32Array.from({length: rows * columns}, () => (random() * 2 - 1) / Math.sqrt(rows)));
    const shapeOf = (name: string, dims: number[]) => tensor(name, [dims.length], BigInt64Array.from(dims.map(BigInt)));
    const patches = (shape.tile / shape.patch) ** 2;
    const imageTokens = patches / shape.scaleFactor ** 2;

    // Vision: pixel_values [b, tiles, 3, 512, 512] -> image_features [b * tiles, 64, hidden].
    const visionInit = [
        tensor("patch_weight", [shape.visionHidden, 3, shape.patch, shape.patch],
            Float32Array.from({length: shape.visionHidden * 3 * shape.patch ** 2}, () => (random() * 2 - 1) / Math.sqrt(3 * shape.patch ** 2))),
        shapeOf("tiles_shape", [-1, 3, shape.tile, shape.tile]), shapeOf("sequence_shape", [0, shape.visionHidden, patches]),
        shapeOf("vision_heads_shape", [0, 0, shape.visionHeads, shape.visionHidden / shape.visionHeads]), shapeOf("vision_merge_shape", [0, 0, shape.visionHidden]),
        shapeOf("shuffle_shape", [-1, Math.sqrt(imageTokens), shape.scaleFactor, Math.sqrt(imageTokens), shape.scaleFactor, shape.visionHidden]),
        shapeOf("shuffled_shape", [-1, imageTokens, shape.visionHidden * shape.scaleFactor ** 2]),
        tensor("vision_scale", [], Float32Array.of(1 / Math.sqrt(shape.visionHidden / shape.visionHeads))),
        weights("connector", shape.visionHidden * shape.scaleFactor ** 2, shape.hidden)
    ];
    const visionNodes = [
        node("Reshape", ["pixel_values", "tiles_shape"], ["tiles"]),
        node("Conv", ["tiles", "patch_weight"], ["patch_grid"], [{name: "strides", ints: [shape.patch, shape.patch]}]),
        node("Reshape", ["patch_grid", "sequence_shape"], ["channels_first"]),
        node("Transpose", ["channels_first"], ["v0"], [{name: "perm", ints: [0, 2, 1]}])
    ];
    for (let layer = 0; layer < shape.visionLayers; layer++) {
        const p = `v${layer}`;
        visionInit.push(weights(`${p}_qkv`, shape.visionHidden, 3 * shape.visionHidden), weights(`${p}_out`, shape.visionHidden, shape.visionHidden),
            weights(`${p}_up`, shape.visionHidden, shape.visionMlp), weights(`${p}_down`, shape.visionMlp, shape.visionHidden));
        visionNodes.push(...attention(p, `v${layer}`, `${p}_qkv`, "vision_heads_shape", "vision_merge_shape", "vision_scale"),
            node("Add", [`v${layer}`, `${p}_attended`], [`${p}_mid`]),
            node("MatMul", [`${p}_mid`, `${p}_up`], [`${p}_upped`]), node("Tanh", [`${p}_upped`], [`${p}_act`]),
            node("MatMul", [`${p}_act`, `${p}_down`], [`${p}_downed`]), node("Add", [`${p}_mid`, `${p}_downed`], [`v${layer + 1}`]));
    }
    visionNodes.push(
        node("Reshape", [`v${shape.visionLayers}`, "shuffle_shape"], ["grid"]),
        node("Transpose", ["grid"], ["shuffled_grid"], [{name: "perm", ints: [0, 1, 3, 2, 4, 5]}]),
        node("Reshape", ["shuffled_grid", "shuffled_shape"], ["shuffled"]),
        node("MatMul", ["shuffled", "connector"], ["image_features"]));
    const vision = encodeModel({
        name: "smolvlm-256m-shaped-vision-encoder", initializer: visionInit, node: visionNodes,
        input: [valueInfo(float, "pixel_values", ["batch_size", "num_images", 3, "height", "width"])],
        output: [valueInfo(float, "image_features", ["batch_size_times_num_images", imageTokens, shape.hidden])]
    });

    const embed = encodeModel({
        name: "smolvlm-256m-shaped-embed-tokens",
        initializer: [weights("token_embeddings", shape.vocab, shape.hidden)],
        node: [node("Gather", ["token_embeddings", "input_ids"], ["inputs_embeds"], [{name: "axis", i: 0}])],
        input: [valueInfo(int64, "input_ids", ["batch_size", "sequence_length"])],
        output: [valueInfo(float, "inputs_embeds", ["batch_size", "sequence_length", shape.hidden])]
    });

    // Decoder: grouped-query attention over the cache (each key/value head serves heads / kvHeads query heads, grouped
    // by a reshape), then the gated MLP.
    const decoderInit = [
        shapeOf("q_shape", [0, 0, shape.heads, shape.headDim]), shapeOf("kv_shape", [0, 0, shape.kvHeads, shape.headDim]),
        shapeOf("grouped_shape", [0, shape.kvHeads, -1, shape.headDim]), shapeOf("ungrouped_shape", [0, shape.heads, -1, shape.headDim]),
        shapeOf("merge_shape", [0, 0, shape.heads * shape.headDim]),
        tensor("text_scale", [], Float32Array.of(1 / Math.sqrt(shape.headDim))),
        weights("lm_head", shape.hidden, shape.vocab),
        tensor("lm_bias", [shape.vocab], Float32Array.from({length: shape.vocab}, (_, id) => id >= inVocab || id === endId ? -1000 : 0))
    ];
    const decoderNodes = [node("Identity", ["inputs_embeds"], ["h0"])];
    const cache: ReturnType<typeof valueInfo>[] = [];
    const presents: ReturnType<typeof valueInfo>[] = [];
    for (let layer = 0; layer < shape.layers; layer++) {
        const p = `t${layer}`;
        const past = `past_key_values.${layer}`;
        const present = `present.${layer}`;
        decoderInit.push(weights(`${p}_q`, shape.hidden, shape.heads * shape.headDim), weights(`${p}_k`, shape.hidden, shape.kvHeads * shape.headDim),
            weights(`${p}_v`, shape.hidden, shape.kvHeads * shape.headDim), weights(`${p}_o`, shape.heads * shape.headDim, shape.hidden),
            weights(`${p}_gate`, shape.hidden, shape.mlp), weights(`${p}_up`, shape.hidden, shape.mlp), weights(`${p}_down`, shape.mlp, shape.hidden));
        decoderNodes.push(
            node("MatMul", [`h${layer}`, `${p}_q`], [`${p}_q_flat`]), node("Reshape", [`${p}_q_flat`, "q_shape"], [`${p}_q_heads`]),
            node("Transpose", [`${p}_q_heads`], [`${p}_q_first`], [{name: "perm", ints: [0, 2, 1, 3]}]),
            node("Reshape", [`${p}_q_first`, "grouped_shape"], [`${p}_q_grouped`]),
            ...["k", "v"].flatMap((which) => [
                node("MatMul", [`h${layer}`, `${p}_${which}`], [`${p}_${which}_flat`]), node("Reshape", [`${p}_${which}_flat`, "kv_shape"], [`${p}_${which}_heads`]),
                node("Transpose", [`${p}_${which}_heads`], [`${p}_${which}_new`], [{name: "perm", ints: [0, 2, 1, 3]}]),
                node("Concat", [`${past}.${which === "k" ? "key" : "value"}`, `${p}_${which}_new`], [`${present}.${which === "k" ? "key" : "value"}`], [{name: "axis", i: 2}])
            ]),
            node("Transpose", [`${present}.key`], [`${p}_keys_t`], [{name: "perm", ints: [0, 1, 3, 2]}]),
            node("MatMul", [`${p}_q_grouped`, `${p}_keys_t`], [`${p}_scores_raw`]), node("Mul", [`${p}_scores_raw`, "text_scale"], [`${p}_scores`]),
            node("Softmax", [`${p}_scores`], [`${p}_weights`], [{name: "axis", i: -1}]),
            node("MatMul", [`${p}_weights`, `${present}.value`], [`${p}_mixed`]),
            node("Reshape", [`${p}_mixed`, "ungrouped_shape"], [`${p}_mixed_heads`]),
            node("Transpose", [`${p}_mixed_heads`], [`${p}_mixed_last`], [{name: "perm", ints: [0, 2, 1, 3]}]),
            node("Reshape", [`${p}_mixed_last`, "merge_shape"], [`${p}_merged`]),
            node("MatMul", [`${p}_merged`, `${p}_o`], [`${p}_attended`]), node("Add", [`h${layer}`, `${p}_attended`], [`${p}_mid`]),
            node("MatMul", [`${p}_mid`, `${p}_gate`], [`${p}_gated`]), node("Sigmoid", [`${p}_gated`], [`${p}_sig`]),
            node("Mul", [`${p}_gated`, `${p}_sig`], [`${p}_silu`]), node("MatMul", [`${p}_mid`, `${p}_up`], [`${p}_upped`]),
            node("Mul", [`${p}_silu`, `${p}_upped`], [`${p}_product`]), node("MatMul", [`${p}_product`, `${p}_down`], [`${p}_downed`]),
            node("Add", [`${p}_mid`, `${p}_downed`], [`h${layer + 1}`]));
        for (const which of ["key", "value"]) {
            cache.push(valueInfo(float, `${past}.${which}`, ["batch_size", shape.kvHeads, "past_sequence_length", shape.headDim]));
            presents.push(valueInfo(float, `${present}.${which}`, ["batch_size", shape.kvHeads, "total_sequence_length", shape.headDim]));
        }
    }
    decoderNodes.push(node("MatMul", [`h${shape.layers}`, "lm_head"], ["projected_logits"]), node("Add", ["projected_logits", "lm_bias"], ["logits"]));
    const decoder = encodeModel({
        name: "smolvlm-256m-shaped-decoder", initializer: decoderInit, node: decoderNodes,
        input: [
            valueInfo(float, "inputs_embeds", ["batch_size", "sequence_length", shape.hidden]),
            valueInfo(int64, "attention_mask", ["batch_size", "total_sequence_length"]),
            valueInfo(int64, "position_ids", ["batch_size", "sequence_length"]),
            ...cache
        ],
        output: [valueInfo(float, "logits", ["batch_size", "sequence_length", shape.vocab]), ...presents]
    });
    return {vision, embed, decoder};
}

/** Multi-head self-attention of the vision tower (no cache): `${p}_attended` from `input`. */
function attention(p: string, input: string, qkv: string, headsShape: string, mergeShape: string, scale: string) {
    return [
        node("MatMul", [input, qkv], [`${p}_qkv_out`]),
        node("Split", [`${p}_qkv_out`], [`${p}_q`, `${p}_k`, `${p}_v`], [{name: "axis", i: 2}]),
        ...["q", "k", "v"].flatMap((which) => [
            node("Reshape", [`${p}_${which}`, headsShape], [`${p}_${which}_heads`]),
            node("Transpose", [`${p}_${which}_heads`], [`${p}_${which}_first`], [{name: "perm", ints: which === "k" ? [0, 2, 3, 1] : [0, 2, 1, 3]}])
        ]),
        node("MatMul", [`${p}_q_first`, `${p}_k_first`], [`${p}_scores_raw`]), node("Mul", [`${p}_scores_raw`, scale], [`${p}_scores`]),
        node("Softmax", [`${p}_scores`], [`${p}_weights`], [{name: "axis", i: -1}]),
        node("MatMul", [`${p}_weights`, `${p}_v_first`], [`${p}_mixed`]),
        node("Transpose", [`${p}_mixed`], [`${p}_mixed_last`], [{name: "perm", ints: [0, 2, 1, 3]}]),
        node("Reshape", [`${p}_mixed_last`, mergeShape], [`${p}_merged`]),
        node("MatMul", [`${p}_merged`, `${p}_out`], [`${p}_attended`])
    ];
}
