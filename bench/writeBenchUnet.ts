import fs from "node:fs";
import onnxProto from "onnx-proto";

const {onnx} = onnxProto;
const DataType = onnx.TensorProto.DataType;
const AttributeType = onnx.AttributeProto.AttributeType;

/**
 * A UNet stand-in heavy enough to time (the test model's UNet is one 1x1 convolution): the same
 * inputs and output as an optimum SD export (`sample`, int64 `timestep`, `encoder_hidden_states` ->
 * `out_sample`), computing `layers` 3x3 convolutions of `channels` channels on the latents, about
 * 2 x 9 x channels^2 x layers FLOPs per latent pixel and row. Output stays near the identity (bounded
 * by Tanh) so the sampler's latents stay finite. fp32.
 */
export function writeBenchUnet(file: string, {channels, layers, hidden, seed = 1}: {channels: number, layers: number, hidden: number, seed?: number}) {
    let state = seed >>> 0 || 1;
    const random = () => {
        state ^= state << 13; state >>>= 0;
        state ^= state >>> 17;
        state ^= state << 5; state >>>= 0;
        return state / 2 ** 32 - 0.5;
    };
    const floats = (count: number, scale: number) => Float32Array.from({length: count}, () => random() * 2 * scale);
    const initializers: onnxProto.onnx.ITensorProto[] = [];
    const nodes: onnxProto.onnx.INodeProto[] = [];
    const weight = (name: string, dims: number[], values: Float32Array) =>
        initializers.push(onnx.TensorProto.create({name, dims, dataType: DataType.FLOAT, rawData: new Uint8Array(values.buffer)}));
    const node = (opType: string, input: string[], output: string[], attribute: onnxProto.onnx.IAttributeProto[] = []) =>
        nodes.push(onnx.NodeProto.create({opType, input, output, name: `${opType}_${nodes.length}`, attribute}));
    const conv3x3 = [{name: "kernel_shape", type: AttributeType.INTS, ints: [3, 3]}, {name: "pads", type: AttributeType.INTS, ints: [1, 1, 1, 1]}];

    weight("in_w", [channels, 4, 3, 3], floats(channels * 36, 1 / Math.sqrt(36)));
    weight("in_b", [channels], floats(channels, 0.1));
    node("Conv", ["sample", "in_w", "in_b"], ["h0"], conv3x3);
    node("Relu", ["h0"], ["a0"]);
    for (let layer = 1; layer <= layers; layer++) {
        weight(`w${layer}`, [channels, channels, 3, 3], floats(channels * channels * 9, 1 / Math.sqrt(channels * 9)));
        weight(`b${layer}`, [channels], floats(channels, 0.1));
        node("Conv", [`a${layer - 1}`, `w${layer}`, `b${layer}`], [`h${layer}`], conv3x3);
        node("Relu", [`h${layer}`], [`a${layer}`]);
    }
    weight("out_w", [4, channels, 1, 1], floats(4 * channels, 0.05 / Math.sqrt(channels)));
    weight("out_b", [4], floats(4, 0.05));
    node("Conv", [`a${layers}`, "out_w", "out_b"], ["delta"], [{name: "kernel_shape", type: AttributeType.INTS, ints: [1, 1]}]);
    // Text and time terms, so both inputs matter.
    weight("text_projection", [hidden, 4], floats(hidden * 4, 0.3));
    initializers.push(onnx.TensorProto.create({name: "spatial_axes", dims: [2], dataType: DataType.INT64, rawData: new Uint8Array(BigInt64Array.of(2n, 3n).buffer)}));
    initializers.push(onnx.TensorProto.create({name: "time_shape", dims: [4], dataType: DataType.INT64, rawData: new Uint8Array(BigInt64Array.of(-1n, 1n, 1n, 1n).buffer)}));
    weight("time_scale", [], Float32Array.of(0.001));
    weight("identity", [], Float32Array.of(0.9));
    node("ReduceMean", ["encoder_hidden_states"], ["text_mean"], [{name: "axes", type: AttributeType.INTS, ints: [1]}, {name: "keepdims", type: AttributeType.INT, i: 0}]);
    node("MatMul", ["text_mean", "text_projection"], ["text_flat"]);
    node("Unsqueeze", ["text_flat", "spatial_axes"], ["text_term"]);
    node("Cast", ["timestep"], ["time_float"], [{name: "to", type: AttributeType.INT, i: DataType.FLOAT}]);
    node("Mul", ["time_float", "time_scale"], ["time_scaled"]);
    node("Reshape", ["time_scaled", "time_shape"], ["time_term"]);
    node("Mul", ["sample", "identity"], ["kept"]);
    node("Add", ["kept", "delta"], ["s1"]);
    node("Add", ["s1", "text_term"], ["s2"]);
    node("Add", ["s2", "time_term"], ["s3"]);
    node("Tanh", ["s3"], ["out_sample"]);

    const info = (name: string, type: number, dims: (string | number)[]) => onnx.ValueInfoProto.create({
        name, type: {tensorType: {elemType: type, shape: {dim: dims.map((dim) => typeof dim === "number" ? {dimValue: dim} : {dimParam: dim})}}}
    });
    const graph = onnx.GraphProto.create({
        name: "bench_unet", node: nodes, initializer: initializers,
        input: [info("sample", DataType.FLOAT, ["batch", 4, "height", "width"]), info("timestep", DataType.INT64, ["batch"]),
            info("encoder_hidden_states", DataType.FLOAT, ["batch", 77, hidden])],
        output: [info("out_sample", DataType.FLOAT, ["batch", 4, "height", "width"])]
    });
    const model = onnx.ModelProto.create({irVersion: 7, producerName: "local-openai-server bench", opsetImport: [{domain: "", version: 13}], graph});
    fs.writeFileSync(file, onnx.ModelProto.encode(model).finish());
}
