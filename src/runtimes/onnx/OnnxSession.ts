import type * as Ort from "onnxruntime-node";
import { float16 } from "./float16.js";
import { onnxRuntime } from "./onnxRuntime.js";
import { sessionOptions } from "./sessionOptions.js";

export type OnnxValueInfo = {name: string, type: Ort.Tensor.Type, shape: readonly (number | string)[]};

/**
 * A raw ONNX Runtime session (on transformers.js's runtime) that builds its inputs from the element types and
 * shapes the model declares, not from assumptions: float inputs become float32 or float16 tensors, integer ones
 * int32 or int64 (or float, for a timestep exported as float), and float outputs come back as float32 whatever
 * their stored type.
 */
export class OnnxSession {
    readonly inputs: ReadonlyMap<string, OnnxValueInfo>;
    readonly outputs: ReadonlyMap<string, OnnxValueInfo>;

    private constructor(readonly file: string, private readonly session: Ort.InferenceSession) {
        this.inputs = new Map(session.inputMetadata.map(describe));
        this.outputs = new Map(session.outputMetadata.map(describe));
    }

    /** Loads a model file; external data (`model.onnx_data`, `weights.pb`) is found next to it by ONNX Runtime. */
    static async load(file: string, threads: number): Promise<OnnxSession> {
        const session = await onnxRuntime().InferenceSession.create(file, {...sessionOptions(threads), graphOptimizationLevel: "all"});
        return new OnnxSession(file, session);
    }

    /** The declared input `name`, or the first whose name is one of `names`; throws naming the file when none is there. */
    input(...names: string[]): OnnxValueInfo {
        for (const name of names) {
            const found = this.inputs.get(name);
            if (found != null)
                return found;
        }
        throw new Error(`${this.file} has no input named ${names.join(" or ")} (inputs: ${[...this.inputs.keys()].join(", ")})`);
    }

    /** A tensor for `input` from numbers, in the input's declared element type. */
    tensor(input: OnnxValueInfo, values: ArrayLike<number>, dims: readonly number[]): Ort.Tensor {
        const {Tensor} = onnxRuntime();
        switch (input.type) {
            case "float32":
                return new Tensor("float32", Float32Array.from(values), dims);
            case "float16":
                return new Tensor("float16", float16.fromFloat32(values), dims);
            case "float64":
                return new Tensor("float64", Float64Array.from(values), dims);
            case "int32":
                return new Tensor("int32", Int32Array.from(values, Math.round), dims);
            case "int64":
                return new Tensor("int64", BigInt64Array.from(Array.from(values, (value) => BigInt(Math.round(value)))), dims);
            default:
                throw new Error(`${this.file}: input ${input.name} has element type ${input.type}, which this server cannot feed.`);
        }
    }

    async run(feeds: Record<string, Ort.Tensor>): Promise<Record<string, Ort.Tensor>> {
        return await this.session.run(feeds) as Record<string, Ort.Tensor>;
    }

    /** A float output as float32 values (float16 converted exactly). */
    static floats(tensor: Ort.Tensor): Float32Array {
        switch (tensor.type) {
            case "float32":
                return tensor.data as Float32Array;
            case "float16": {
                const data = tensor.data as unknown;
                // onnxruntime-node returns float16 data as Uint16Array (or Float16Array where the platform has one).
                return data instanceof Uint16Array ? float16.toFloat32(data) : Float32Array.from(data as ArrayLike<number>);
            }
            case "float64":
                return Float32Array.from(tensor.data as Float64Array);
            default:
                throw new Error(`Expected a float output, got ${tensor.type}.`);
        }
    }

    async release() {
        await this.session.release();
    }
}

function describe(value: Ort.InferenceSession.ValueMetadata): [string, OnnxValueInfo] {
    if (!value.isTensor)
        return [value.name, {name: value.name, type: "float32", shape: []}];
    return [value.name, {name: value.name, type: value.type, shape: value.shape}];
}
