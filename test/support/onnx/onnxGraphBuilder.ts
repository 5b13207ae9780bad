import onnxProto from "onnx-proto";

const {onnx} = onnxProto;

export const float = onnx.TensorProto.DataType.FLOAT;
export const int64 = onnx.TensorProto.DataType.INT64;

/** An initializer from a typed array. */
export function tensor(name: string, dims: number[], data: Float32Array | BigInt64Array) {
    return onnx.TensorProto.create({
        name, dims, dataType: data instanceof Float32Array ? float : int64,
        rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    });
}

/** A graph input or output; string dims are symbolic (dynamic). */
export function valueInfo(elemType: number, name: string, dims: (string | number)[]) {
    return onnx.ValueInfoProto.create({
        name,
        type: {tensorType: {elemType, shape: {dim: dims.map((dim) => typeof dim === "number" ? {dimValue: dim} : {dimParam: dim})}}}
    });
}

type Attribute = {name: string, i?: number, f?: number, s?: string, ints?: number[]};

/** A node; attributes given as plain values (int, float, string or int list). */
export function node(opType: string, input: string[], output: string[], attributes: Attribute[] = []) {
    const types = onnx.AttributeProto.AttributeType;
    return onnx.NodeProto.create({
        opType, input, output, name: output[0],
        attribute: attributes.map(({name, i, f, s, ints}) =>
            i != null ? {name, type: types.INT, i}
                : f != null ? {name, type: types.FLOAT, f}
                    : s != null ? {name, type: types.STRING, s: new TextEncoder().encode(s)}
                        : {name, type: types.INTS, ints: ints ?? []})
    });
}

/** Serialises a graph as an opset-13 model. */
export function encodeModel(graph: onnxProto.onnx.IGraphProto): Uint8Array {
    return onnx.ModelProto.encode(onnx.ModelProto.create({
        irVersion: 7,
        producerName: "local-openai-server tests",
        opsetImport: [{domain: "", version: 13}],
        graph: onnx.GraphProto.create(graph)
    })).finish();
}
