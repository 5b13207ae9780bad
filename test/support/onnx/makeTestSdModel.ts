import fs from "node:fs";
import path from "node:path";
import onnxProto from "onnx-proto";
import { float16 } from "../../../src/runtimes/onnx/float16.js";
import { seededRandom } from "../seededRandom.js";

const {onnx} = onnxProto;
const DataType = onnx.TensorProto.DataType;
const AttributeType = onnx.AttributeProto.AttributeType;

export type TestSdOptions = {
    seed?: number;
    /** Weights and float inputs/outputs: fp16 = float16 tensors with Cast nodes around fp32 compute, as fp16 exports run on CPU. */
    precision?: "fp32" | "fp16";
    /** UNet `timestep`: int64 [batch] (early optimum), a float [1] (diffusers' pipelines feed that), or a rank-0 float (current optimum-onnx); float follows `precision`. */
    timestep?: "int64" | "float" | "scalar";
    /** An LCM-style `timestep_cond` input [batch, size] (the guidance-scale embedding); 0 = none. */
    timestepCond?: number;
    /** Text encoder `input_ids` element type (optimum SD exports use int32). */
    inputIds?: "int32" | "int64";
    /** Also write tokenizer/tokenizer.json (real exports often ship only vocab.json + merges.txt). */
    tokenizerJson?: boolean;
    /** Write unet/config.json and vae_decoder/config.json; without them the engine reads the sizes from the sessions (then fixed to 8x8 latents). */
    configs?: boolean;
    /** Text encoder hidden size (cross-attention dimension). */
    hiddenSize?: number;
    /** Latent side of the native size (default 8 = 64 px; 64 = 512 px as SD1.x). */
    latentSize?: number;
    /**
     * For benchmarks: a UNet whose cost is realistic per step, a chain of 3x3 convolutions with these channel
     * counts (ReLU between) in place of the 1x1 one, e.g. [128, 256, 128]. Default: none (tiny).
     */
    convChannels?: number[];
};

/** Words that get whole-word BPE merges in the test vocabulary (others fall back to characters). */
export const testSdWords = ["a", "photo", "of", "the", "cat", "dog", "red", "blue", "house", "tree", "sky", "in", "on", "with",
    "blurry", "painting", "astronaut", "riding", "horse", "mountain", "lake", "sunset", "ugly", "bad", "quality", "city", "night"];

export const testSdTextWindow = 77;
/** Latent side of the native size (8 x the VAE's factor 8 = 64 px). */
export const testSdLatentSize = 8;

/**
 * Writes a tiny random-weight Stable Diffusion folder in the diffusers/optimum ONNX layout:
 * model_index.json, tokenizer/ (CLIP byte-level BPE with `</w>` word ends: vocab.json, merges.txt,
 * tokenizer_config.json, optionally tokenizer.json), text_encoder/model.onnx, unet/model.onnx,
 * vae_decoder/model.onnx, scheduler/scheduler_config.json (SD1.x), configs. Every network depends on
 * its inputs (tokens, positions, sample, timestep, text) with small weights so sampling stays finite:
 * - text encoder: Gather(token embedding) + positional embedding -> MatMul -> Tanh = last_hidden_state [b,77,D];
 * - UNet: Tanh(c + up8(avgpool8(c)) with c = 1x1 Conv(sample) (near identity) + MatMul(mean over tokens of the text) + sin(t/100) x vector) = out_sample [b,4,h,w];
 * - VAE decoder: 1x1 Conv 4->3, nearest Resize x8, Tanh = sample [b,3,8h,8w] in -1..1.
 */
export function makeTestSdModel(folder: string, options: TestSdOptions = {}) {
    const precision = options.precision ?? "fp32";
    const hidden = options.hiddenSize ?? 32;
    const random = seededRandom(options.seed ?? 1);
    const floats = (count: number, scale: number) => Float32Array.from({length: count}, () => (random() * 2 - 1) * scale);
    const tokenizer = testSdTokenizer();

    const write = (relative: string, content: string | Uint8Array) => {
        fs.mkdirSync(path.dirname(path.join(folder, relative)), {recursive: true});
        fs.writeFileSync(path.join(folder, relative), content);
    };
    const json = (value: unknown) => JSON.stringify(value, null, 2);

    write("model_index.json", json({
        _class_name: "OnnxStableDiffusionPipeline", _diffusers_version: "0.30.0",
        feature_extractor: [null, null], safety_checker: [null, null], requires_safety_checker: false,
        scheduler: ["diffusers", "PNDMScheduler"], text_encoder: ["diffusers", "OnnxRuntimeModel"],
        tokenizer: ["transformers", "CLIPTokenizer"], unet: ["diffusers", "OnnxRuntimeModel"],
        vae_decoder: ["diffusers", "OnnxRuntimeModel"], vae_encoder: [null, null]
    }));
    write("scheduler/scheduler_config.json", json({
        _class_name: "PNDMScheduler", _diffusers_version: "0.30.0", beta_end: 0.012, beta_schedule: "scaled_linear",
        beta_start: 0.00085, clip_sample: false, num_train_timesteps: 1000, prediction_type: "epsilon",
        set_alpha_to_one: false, skip_prk_steps: true, steps_offset: 1, timestep_spacing: "leading", trained_betas: null
    }));
    write("tokenizer/vocab.json", JSON.stringify(Object.fromEntries(tokenizer.vocabulary.map((token, id) => [token, id]))));
    write("tokenizer/merges.txt", "#version: 0.2\n" + tokenizer.merges.map(([left, right]) => `${left} ${right}`).join("\n") + "\n");
    write("tokenizer/special_tokens_map.json", json({
        bos_token: "<|startoftext|>", eos_token: "<|endoftext|>", pad_token: "<|endoftext|>", unk_token: "<|endoftext|>"
    }));
    write("tokenizer/tokenizer_config.json", json({
        tokenizer_class: "CLIPTokenizer", model_max_length: testSdTextWindow, do_lower_case: true, errors: "replace",
        add_prefix_space: false, bos_token: "<|startoftext|>", eos_token: "<|endoftext|>", pad_token: "<|endoftext|>",
        unk_token: "<|endoftext|>"
    }));
    if (options.tokenizerJson === true)
        write("tokenizer/tokenizer.json", JSON.stringify(clipTokenizerJson(tokenizer)));

    const graphs = new TestGraphs(precision, floats);
    write("text_encoder/model.onnx", graphs.textEncoder(tokenizer.vocabulary.length, hidden, options.inputIds ?? "int32"));
    const latentSize = options.latentSize ?? testSdLatentSize;
    write("unet/model.onnx", graphs.unet(hidden, options.timestep ?? "int64", options.configs === false ? latentSize : null, options.convChannels ?? [], options.timestepCond ?? 0));
    write("vae_decoder/model.onnx", graphs.vaeDecoder());
    write("text_encoder/config.json", json({
        model_type: "clip_text_model", architectures: ["CLIPTextModel"], hidden_size: hidden, vocab_size: tokenizer.vocabulary.length,
        max_position_embeddings: testSdTextWindow, bos_token_id: tokenizer.vocabulary.length - 2, eos_token_id: tokenizer.vocabulary.length - 1
    }));
    if (options.configs !== false) {
        write("unet/config.json", json({
            _class_name: "UNet2DConditionModel", sample_size: latentSize, in_channels: 4, out_channels: 4, cross_attention_dim: hidden
        }));
        write("vae_decoder/config.json", json({
            _class_name: "AutoencoderKL", latent_channels: 4, out_channels: 3, scaling_factor: 0.18215,
            block_out_channels: [8, 8, 8, 8], sample_size: latentSize * 8
        }));
    }
}

/** The CLIP-style vocabulary: 256 byte symbols, the same with `</w>`, merged words, then the two specials (as CLIP's). */
export function testSdTokenizer() {
    const bytes = [...byteSymbols().values()];
    const vocabulary = [...bytes, ...bytes.map((symbol) => symbol + "</w>")];
    const merges: [string, string][] = [];
    const known = new Set(vocabulary);
    for (const word of testSdWords) {
        const symbols = [...word].map((char, index) => index === word.length - 1 ? char + "</w>" : char);
        let left = symbols[0];
        for (const right of symbols.slice(1)) {
            const merged = left + right;
            if (!known.has(merged)) {
                known.add(merged);
                vocabulary.push(merged);
                merges.push([left, right]);
            }
            left = merged;
        }
    }
    vocabulary.push("<|startoftext|>", "<|endoftext|>");
    return {vocabulary, merges};
}

/**
 * tokenizer.json as Hugging Face's CLIPTokenizerFast conversion writes it (openai/clip-vit-* tokenizer.json).
 * Kept apart from the one src/capabilities/images/onnx/loadClipTokenizer.ts builds from vocab.json +
 * merges.txt on purpose: test/model/imageEngine.test.ts checks that both tokenize alike, which it
 * could not if they came from one function.
 */
function clipTokenizerJson({vocabulary, merges}: ReturnType<typeof testSdTokenizer>) {
    const id = (token: string) => vocabulary.indexOf(token);
    const special = (content: string) => ({id: id(content), content, single_word: false, lstrip: false, rstrip: false, normalized: content !== "<|endoftext|>", special: true});
    return {
        version: "1.0",
        truncation: null,
        padding: null,
        added_tokens: [special("<|startoftext|>"), special("<|endoftext|>")],
        normalizer: {type: "Sequence", normalizers: [{type: "NFC"}, {type: "Replace", pattern: {Regex: "\\s+"}, content: " "}, {type: "Lowercase"}]},
        pre_tokenizer: {
            type: "Sequence",
            pretokenizers: [
                {type: "Split", pattern: {Regex: "<\\|startoftext\\|>|<\\|endoftext\\|>|'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+"}, behavior: "Removed", invert: true},
                {type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false}
            ]
        },
        post_processor: {
            type: "RobertaProcessing", sep: ["<|endoftext|>", id("<|endoftext|>")], cls: ["<|startoftext|>", id("<|startoftext|>")],
            trim_offsets: false, add_prefix_space: false
        },
        decoder: {type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true},
        model: {
            type: "BPE", dropout: null, unk_token: "<|endoftext|>", continuing_subword_prefix: "", end_of_word_suffix: "</w>",
            fuse_unk: false, byte_fallback: false,
            vocab: Object.fromEntries(vocabulary.map((token, index) => [token, index])),
            merges: merges.map(([left, right]) => `${left} ${right}`)
        }
    };
}

/** GPT-2/CLIP's reversible byte -> printable character map (`bytes_to_unicode`), in its order. */
function byteSymbols(): Map<number, string> {
    const printable: number[] = [];
    for (let b = 33; b <= 126; b++) printable.push(b);
    for (let b = 161; b <= 172; b++) printable.push(b);
    for (let b = 174; b <= 255; b++) printable.push(b);
    const map = new Map<number, string>(printable.map((b) => [b, String.fromCharCode(b)]));
    let next = 0;
    for (let b = 0; b < 256; b++)
        if (!map.has(b))
            map.set(b, String.fromCharCode(256 + next++));
    return map;
}

type Node = onnxProto.onnx.INodeProto;
type Initializer = onnxProto.onnx.ITensorProto;

/** Builds the three graphs; in fp16, float weights are stored as float16 and cast to float32, float inputs/outputs are float16. */
class TestGraphs {
    constructor(private readonly precision: "fp32" | "fp16", private readonly floats: (count: number, scale: number) => Float32Array) {}

    private get floatType() {
        return this.precision === "fp16" ? DataType.FLOAT16 : DataType.FLOAT;
    }

    textEncoder(vocabularySize: number, hidden: number, inputIds: "int32" | "int64") {
        const g = new GraphBuilder(this.precision);
        g.weight("token_embedding", [vocabularySize, hidden], this.floats(vocabularySize * hidden, 1));
        g.weight("position_embedding", [testSdTextWindow, hidden], this.floats(testSdTextWindow * hidden, 0.3));
        g.weight("dense", [hidden, hidden], this.floats(hidden * hidden, 1 / Math.sqrt(hidden)));
        g.node("Gather", ["token_embedding", "input_ids"], ["tokens"], [{name: "axis", type: AttributeType.INT, i: 0}]);
        g.node("Add", ["tokens", "position_embedding"], ["embedded"]);
        g.node("MatMul", ["embedded", "dense"], ["projected"]);
        g.node("Tanh", ["projected"], ["hidden"]);
        g.node("ReduceMean", ["hidden"], ["pooled"], [{name: "axes", type: AttributeType.INTS, ints: [1]}, {name: "keepdims", type: AttributeType.INT, i: 0}]);
        g.output("hidden", "last_hidden_state", ["batch", testSdTextWindow, hidden]);
        g.output("pooled", "pooler_output", ["batch", hidden]);
        const ids = g.input("input_ids", inputIds === "int32" ? DataType.INT32 : DataType.INT64, ["batch", testSdTextWindow]);
        return g.model("text_encoder", [ids], this.floatType);
    }

    /** `fixedSide`: a latent side fixed in the session's input shape, or null for dynamic height and width. */
    unet(hidden: number, timestep: "int64" | "float" | "scalar", fixedSide: number | null, convChannels: number[], condSize: number) {
        const g = new GraphBuilder(this.precision);
        const side = fixedSide;
        const sample = g.floatInput("sample", ["batch", 4, side ?? "height", side ?? "width"]);
        const text = g.floatInput("encoder_hidden_states", ["batch", testSdTextWindow, hidden]);
        const time = timestep === "int64"
            ? g.input("timestep", DataType.INT64, ["batch"])
            : g.floatInput("timestep", timestep === "scalar" ? [] : [1]);
        const cond = condSize > 0 ? g.floatInput("timestep_cond", ["batch", condSize]) : null;
        // Close to the identity: the scaled sample is mostly noise, so predicting it keeps the latents (and pixels) in range.
        g.weight("conv_weight", [4, 4, 1, 1], this.floats(16, 0.15).map((value, index) => value + (index % 5 === 0 ? 0.9 : 0)));
        g.weight("conv_bias", [4], this.floats(4, 0.1));
        g.weight("text_projection", [hidden, 4], this.floats(hidden * 4, 0.6));
        g.weight("time_vector", [1, 4, 1, 1], this.floats(4, 0.5));
        g.constant("time_scale", [], Float32Array.of(0.01));
        g.int64s("spatial_axes", [2, 3]);
        g.int64s("time_shape", [-1, 1, 1, 1]);
        g.node("Conv", [sample, "conv_weight", "conv_bias"], [convChannels.length === 0 ? "mixed" : "direct"], [{name: "kernel_shape", type: AttributeType.INTS, ints: [1, 1]}]);
        if (convChannels.length > 0) {
            // Benchmark body: 3x3 convolutions 4 -> c1 -> ... -> 4 (He-scaled, ReLU between), small, added to the 1x1 path.
            let from = sample;
            const widths = [4, ...convChannels, 4];
            for (let layer = 1; layer < widths.length; layer++) {
                const [inputs, outputs] = [widths[layer - 1], widths[layer]];
                const last = layer === widths.length - 1;
                g.weight(`body_weight_${layer}`, [outputs, inputs, 3, 3], this.floats(outputs * inputs * 9, (last ? 0.01 : 1) * Math.sqrt(2 / (inputs * 9))));
                g.weight(`body_bias_${layer}`, [outputs], this.floats(outputs, 0.01));
                g.node("Conv", [from, `body_weight_${layer}`, `body_bias_${layer}`], [`body_conv_${layer}`], [
                    {name: "kernel_shape", type: AttributeType.INTS, ints: [3, 3]}, {name: "pads", type: AttributeType.INTS, ints: [1, 1, 1, 1]}
                ]);
                from = `body_conv_${layer}`;
                if (!last) {
                    g.node("Relu", [from], [`body_relu_${layer}`]);
                    from = `body_relu_${layer}`;
                }
            }
            g.node("Add", ["direct", from], ["mixed"]);
        }
        g.node("ReduceMean", [text], ["text_mean"], [{name: "axes", type: AttributeType.INTS, ints: [1]}, {name: "keepdims", type: AttributeType.INT, i: 0}]);
        g.node("MatMul", ["text_mean", "text_projection"], ["text_term_flat"]);
        g.node("Unsqueeze", ["text_term_flat", "spatial_axes"], ["text_term"]);
        g.node("Cast", [time], ["time_float"], [{name: "to", type: AttributeType.INT, i: DataType.FLOAT}]);
        g.node("Mul", ["time_float", "time_scale"], ["time_scaled"]);
        g.node("Sin", ["time_scaled"], ["time_sin"]);
        g.node("Reshape", ["time_sin", "time_shape"], ["time_column"]);
        g.node("Mul", ["time_column", "time_vector"], [cond == null ? "time_term" : "time_only_term"]);
        if (cond != null) {
            // The guidance embedding, averaged per row and scaled into the time term.
            g.node("ReduceMean", [cond], ["cond_mean"], [{name: "axes", type: AttributeType.INTS, ints: [1]}, {name: "keepdims", type: AttributeType.INT, i: 0}]);
            g.node("Reshape", ["cond_mean", "time_shape"], ["cond_column"]);
            g.node("Mul", ["cond_column", "time_vector"], ["cond_term"]);
            g.node("Add", ["time_only_term", "cond_term"], ["time_term"]);
        }
        // A bottleneck like a real UNet's: pooled by 8 and upsampled back onto the full-size path, so (as in real
        // exports) the latent sides must be multiples of 8 or the shapes do not line up.
        g.constant("bottleneck_scales", [4], Float32Array.of(1, 1, 8, 8));
        g.node("AveragePool", ["mixed"], ["pooled"], [{name: "kernel_shape", type: AttributeType.INTS, ints: [8, 8]}, {name: "strides", type: AttributeType.INTS, ints: [8, 8]}]);
        g.node("Resize", ["pooled", "", "bottleneck_scales"], ["upsampled"], [{name: "mode", type: AttributeType.STRING, s: new TextEncoder().encode("nearest")}]);
        g.node("Add", ["mixed", "upsampled"], ["with_bottleneck"]);
        g.node("Add", ["with_bottleneck", "text_term"], ["with_text"]);
        g.node("Add", ["with_text", "time_term"], ["summed"]);
        g.node("Tanh", ["summed"], ["eps"]);
        g.output("eps", "out_sample", ["batch", 4, side ?? "height", side ?? "width"]);
        return g.model("unet", cond == null ? [sample, text, time] : [sample, text, time, cond], this.floatType);
    }

    vaeDecoder() {
        const g = new GraphBuilder(this.precision);
        const latent = g.floatInput("latent_sample", ["batch", 4, "latent_height", "latent_width"]);
        g.weight("conv_weight", [3, 4, 1, 1], this.floats(12, 0.02));
        g.weight("conv_bias", [3], this.floats(3, 0.2));
        g.constant("scales", [4], Float32Array.of(1, 1, 8, 8));
        g.node("Conv", [latent, "conv_weight", "conv_bias"], ["rgb_small"], [{name: "kernel_shape", type: AttributeType.INTS, ints: [1, 1]}]);
        g.node("Resize", ["rgb_small", "", "scales"], ["rgb_large"], [{name: "mode", type: AttributeType.STRING, s: new TextEncoder().encode("nearest")}]);
        g.node("Tanh", ["rgb_large"], ["image"]);
        g.output("image", "sample", ["batch", 3, "height", "width"]);
        return g.model("vae_decoder", [latent], this.floatType);
    }
}

class GraphBuilder {
    readonly nodes: Node[] = [];
    readonly initializers: Initializer[] = [];
    readonly inputs = new Map<string, onnxProto.onnx.IValueInfoProto>();
    private readonly outputs: {from: string, name: string, dims: (string | number)[]}[] = [];

    constructor(private readonly precision: "fp32" | "fp16") {}

    node(opType: string, input: string[], output: string[], attribute: onnxProto.onnx.IAttributeProto[] = []) {
        this.nodes.push(onnx.NodeProto.create({opType, input, output, name: `${opType}_${this.nodes.length}`, attribute}));
    }

    /** A float weight; in fp16 stored as float16 and cast to float32 under the same name. */
    weight(name: string, dims: number[], values: Float32Array) {
        if (this.precision === "fp32") {
            this.constant(name, dims, values);
            return;
        }
        const halves = float16.fromFloat32(values);
        this.initializers.push(onnx.TensorProto.create({name: name + "_fp16", dims, dataType: DataType.FLOAT16, rawData: bytesOf(halves)}));
        this.node("Cast", [name + "_fp16"], [name], [{name: "to", type: AttributeType.INT, i: DataType.FLOAT}]);
    }

    constant(name: string, dims: number[], values: Float32Array) {
        this.initializers.push(onnx.TensorProto.create({name, dims, dataType: DataType.FLOAT, rawData: bytesOf(values)}));
    }

    int64s(name: string, values: number[]) {
        this.initializers.push(onnx.TensorProto.create({name, dims: [values.length], dataType: DataType.INT64, rawData: bytesOf(BigInt64Array.from(values.map(BigInt)))}));
    }

    input(name: string, elemType: number, dims: (string | number)[]): string {
        this.inputs.set(name, valueInfo(name, elemType, dims));
        return name;
    }

    /** A float input (float16 in fp16, then cast to float32 for the compute); returns the float32 name. */
    floatInput(name: string, dims: (string | number)[]): string {
        if (this.precision === "fp32")
            return this.input(name, DataType.FLOAT, dims);
        this.inputs.set(name + "_f32", valueInfo(name, DataType.FLOAT16, dims));
        this.node("Cast", [name], [name + "_f32"], [{name: "to", type: AttributeType.INT, i: DataType.FLOAT}]);
        return name + "_f32";
    }

    output(from: string, name: string, dims: (string | number)[]) {
        this.outputs.push({from, name, dims});
    }

    /** `inputs`: the names `input`/`floatInput` returned, in the graph's input order. */
    model(name: string, inputs: string[], floatType: number): Uint8Array {
        for (const output of this.outputs)
            this.node(this.precision === "fp16" ? "Cast" : "Identity", [output.from], [output.name],
                this.precision === "fp16" ? [{name: "to", type: AttributeType.INT, i: DataType.FLOAT16}] : []);
        const graph = onnx.GraphProto.create({
            name, node: this.nodes, initializer: this.initializers, input: inputs.map((input) => this.inputs.get(input)!),
            output: this.outputs.map((output) => valueInfo(output.name, floatType, output.dims))
        });
        const model = onnx.ModelProto.create({irVersion: 7, producerName: "local-openai-server tests", opsetImport: [{domain: "", version: 13}], graph});
        return onnx.ModelProto.encode(model).finish();
    }
}

function valueInfo(name: string, elemType: number, dims: (string | number)[]) {
    return onnx.ValueInfoProto.create({
        name, type: {tensorType: {elemType, shape: {dim: dims.map((dim) => typeof dim === "number" ? {dimValue: dim} : {dimParam: dim})}}}
    });
}

function bytesOf(view: ArrayBufferView) {
    return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}
