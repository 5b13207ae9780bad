import {open} from "node:fs/promises";
import {endianness} from "node:os";

// Value type ids from the GGUF spec (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md).
const enum ValueType {
    Uint32 = 4,
    Int32 = 5,
    Float32 = 6,
    Bool = 7,
    String = 8,
    Array = 9
}

const GGML_TYPE_F32 = 0;
const GGML_TYPE_F16 = 1;
const GGML_TYPE_Q8_0 = 8;
const Q8_0_BLOCK = 32;
const Q8_0_BLOCK_BYTES = 2 + Q8_0_BLOCK;

/** How a tensor's values are stored in the file: plain floats, half floats, or llama.cpp's 8-bit blocks. */
export type TensorStorage = "f32" | "f16" | "q8_0";

const ggmlTypeOf: Record<TensorStorage, number> = {f32: GGML_TYPE_F32, f16: GGML_TYPE_F16, q8_0: GGML_TYPE_Q8_0};

function storedBytes(storage: TensorStorage, elementCount: number) {
    if (storage === "q8_0")
        return elementCount / Q8_0_BLOCK * Q8_0_BLOCK_BYTES;
    return elementCount * (storage === "f16" ? 2 : 4);
}
const GGUF_MAGIC = "GGUF";
const GGUF_VERSION = 3;
const DEFAULT_ALIGNMENT = 32;

type ScalarType = ValueType.Uint32 | ValueType.Int32 | ValueType.Float32 | ValueType.Bool | ValueType.String;

type MetadataValue =
    | {type: ScalarType, value: number | boolean | string}
    | {type: ValueType.Array, elementType: ScalarType, values: ArrayLike<number> | readonly string[]};

/** Either the tensor's values, or a function that fills a zeroed array of the right length just before it is written. */
export type F32TensorData = Float32Array | ((target: Float32Array) => void);

type TensorEntry = {
    name: string,
    shape: readonly number[],
    elementCount: number,
    data: F32TensorData,
    storage: TensorStorage,
    offset: number
};

/**
 * Minimal GGUF v3 writer: typed metadata key/values and F32 tensors, little-endian.
 *
 * Tensor data can be given lazily so large random models are generated one tensor at a time while the previous
 * tensor is still being written, instead of materialising the whole model in memory first.
 */
export class GgufWriter {
    readonly alignment: number;
    private readonly metadata = new Map<string, MetadataValue>();
    private readonly tensors: TensorEntry[] = [];
    private nextTensorOffset = 0;

    constructor({alignment = DEFAULT_ALIGNMENT}: {alignment?: number} = {}) {
        if (!Number.isInteger(alignment) || alignment <= 0 || alignment % 8 !== 0)
            throw new Error(`GGUF alignment must be a positive multiple of 8, got ${alignment}`);

        this.alignment = alignment;

        // Written explicitly so readers never have to rely on the default.
        this.addUint32("general.alignment", alignment);
    }

    addUint32(key: string, value: number): this {
        assertIntegerInRange(key, value, 0, 0xffff_ffff);
        return this.set(key, {type: ValueType.Uint32, value});
    }

    addInt32(key: string, value: number): this {
        assertIntegerInRange(key, value, -0x8000_0000, 0x7fff_ffff);
        return this.set(key, {type: ValueType.Int32, value});
    }

    addFloat32(key: string, value: number): this {
        return this.set(key, {type: ValueType.Float32, value});
    }

    addBool(key: string, value: boolean): this {
        return this.set(key, {type: ValueType.Bool, value});
    }

    addString(key: string, value: string): this {
        return this.set(key, {type: ValueType.String, value});
    }

    addStringArray(key: string, values: readonly string[]): this {
        return this.set(key, {type: ValueType.Array, elementType: ValueType.String, values});
    }

    addFloat32Array(key: string, values: ArrayLike<number>): this {
        return this.set(key, {type: ValueType.Array, elementType: ValueType.Float32, values});
    }

    addInt32Array(key: string, values: ArrayLike<number>): this {
        for (let i = 0; i < values.length; i++)
            assertIntegerInRange(key, values[i], -0x8000_0000, 0x7fff_ffff);

        return this.set(key, {type: ValueType.Array, elementType: ValueType.Int32, values});
    }

    addUint32Array(key: string, values: ArrayLike<number>): this {
        for (let i = 0; i < values.length; i++)
            assertIntegerInRange(key, values[i], 0, 0xffff_ffff);

        return this.set(key, {type: ValueType.Array, elementType: ValueType.Uint32, values});
    }

    /**
     * @param shape GGUF order: `shape[0]` is the fastest-varying dimension (ggml's `ne[0]`),
     * so a `[rows, cols]` row-major matrix is `[cols, rows]` here.
     */
    addF32Tensor(name: string, shape: readonly number[], data: F32TensorData, storage: TensorStorage = "f32"): this {
        if (this.tensors.some((tensor) => tensor.name === name))
            throw new Error(`Duplicate tensor name: ${name}`);

        if (shape.length === 0 || shape.length > 4 || shape.some((dim) => !Number.isInteger(dim) || dim <= 0))
            throw new Error(`Invalid shape for tensor ${name}: [${shape.join(", ")}]`);

        const elementCount = shape.reduce((product, dim) => product * dim, 1);
        if (data instanceof Float32Array && data.length !== elementCount)
            throw new Error(`Tensor ${name} has ${data.length} values but its shape needs ${elementCount}`);

        if (storage === "f16" && shape[0] % 2 !== 0)
            throw new Error(`Tensor ${name}: f16 rows need an even length`);
        if (storage === "q8_0" && shape[0] % Q8_0_BLOCK !== 0)
            throw new Error(`Tensor ${name}: q8_0 rows need a multiple of ${Q8_0_BLOCK} values`);
        this.tensors.push({name, shape: [...shape], elementCount, data, storage, offset: this.nextTensorOffset});
        this.nextTensorOffset += alignUp(storedBytes(storage, elementCount), this.alignment);

        return this;
    }

    /** @returns the number of bytes written */
    async write(filePath: string): Promise<number> {
        // Tensor bytes are written straight from Float32Array memory, which is only GGUF's byte order on LE hosts.
        if (endianness() !== "LE")
            throw new Error("GgufWriter only supports little-endian hosts");

        const header = this.encodeHeader();
        const file = await open(filePath, "w");

        try {
            let position = 0;
            const writeAll = async (bytes: Uint8Array) => {
                let written = 0;
                while (written < bytes.byteLength) {
                    const {bytesWritten} = await file.write(bytes, written, bytes.byteLength - written, position + written);
                    written += bytesWritten;
                }
                position += bytes.byteLength;
            };

            await writeAll(header);

            // Overlap producing tensor N+1 (CPU) with writing tensor N (libuv thread pool).
            let pendingWrite: Promise<void> = Promise.resolve();
            for (const tensor of this.tensors) {
                const floats = resolveTensorData(tensor);
                const values = tensor.storage === "f16" ? toFloat16(floats) : tensor.storage === "q8_0" ? toQ8_0(floats) : floats;
                await pendingWrite;

                const byteLength = values.byteLength;
                const padding = alignUp(byteLength, this.alignment) - byteLength;
                pendingWrite = (async () => {
                    await writeAll(new Uint8Array(values.buffer, values.byteOffset, byteLength));
                    if (padding > 0)
                        await writeAll(new Uint8Array(padding));
                })();
            }
            await pendingWrite;

            return position;
        } finally {
            await file.close();
        }
    }

    private set(key: string, value: MetadataValue): this {
        if (key === "general.alignment" && this.metadata.has(key))
            throw new Error("Set general.alignment through the GgufWriter constructor so tensor offsets match it");

        if (this.metadata.has(key))
            throw new Error(`Duplicate metadata key: ${key}`);

        this.metadata.set(key, value);
        return this;
    }

    private encodeHeader(): Uint8Array {
        const out = new ByteSink();

        out.raw(Buffer.from(GGUF_MAGIC, "latin1"));
        out.uint32(GGUF_VERSION);
        out.uint64(this.tensors.length);
        out.uint64(this.metadata.size);

        for (const [key, entry] of this.metadata) {
            out.string(key);
            out.uint32(entry.type);

            if (entry.type === ValueType.Array) {
                out.uint32(entry.elementType);
                out.uint64(entry.values.length);
                for (let i = 0; i < entry.values.length; i++)
                    writeScalar(out, entry.elementType, entry.values[i]);
            } else
                writeScalar(out, entry.type, entry.value);
        }

        for (const tensor of this.tensors) {
            out.string(tensor.name);
            out.uint32(tensor.shape.length);
            for (const dim of tensor.shape)
                out.uint64(dim);

            out.uint32(ggmlTypeOf[tensor.storage]);
            out.uint64(tensor.offset);
        }

        // The tensor data section starts at the next aligned file offset.
        out.raw(new Uint8Array(alignUp(out.length, this.alignment) - out.length));

        return out.toBytes();
    }
}

function resolveTensorData(tensor: TensorEntry): Float32Array {
    if (tensor.data instanceof Float32Array)
        return tensor.data;

    const values = new Float32Array(tensor.elementCount);
    tensor.data(values);
    return values;
}

/** llama.cpp's Q8_0: per 32 values, an f16 scale d = max|x| / 127, then round(x / d) as int8. */
function toQ8_0(values: Float32Array): Uint8Array {
    const blocks = values.length / Q8_0_BLOCK;
    const out = new Uint8Array(blocks * Q8_0_BLOCK_BYTES);
    const view = new DataView(out.buffer);
    const scale = new Float32Array(1);
    for (let block = 0; block < blocks; block++) {
        const start = block * Q8_0_BLOCK;
        let max = 0;
        for (let i = 0; i < Q8_0_BLOCK; i++)
            max = Math.max(max, Math.abs(values[start + i]));
        const d = max / 127;
        scale[0] = d;
        view.setUint16(block * Q8_0_BLOCK_BYTES, toFloat16(scale)[0], true);
        const inverse = d === 0 ? 0 : 1 / d;
        for (let i = 0; i < Q8_0_BLOCK; i++)
            view.setInt8(block * Q8_0_BLOCK_BYTES + 2 + i, Math.round(values[start + i] * inverse));
    }
    return out;
}

/** IEEE 754 half precision, round to nearest even (values here are small, so no overflow handling is needed beyond clamping). */
function toFloat16(values: Float32Array): Uint16Array {
    const out = new Uint16Array(values.length);
    const f32 = new Float32Array(1);
    const u32 = new Uint32Array(f32.buffer);
    for (let i = 0; i < values.length; i++) {
        f32[0] = values[i];
        const bits = u32[0];
        const sign = (bits >>> 16) & 0x8000;
        const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
        let mantissa = bits & 0x7fffff;
        if (exponent <= 0) {
            // subnormal or zero in half precision
            if (exponent < -10) {
                out[i] = sign;
                continue;
            }
            mantissa |= 0x800000;
            const shift = 14 - exponent;
            let half = mantissa >> shift;
            if ((mantissa >> (shift - 1)) & 1 && ((mantissa & ((1 << (shift - 1)) - 1)) !== 0 || (half & 1)))
                half++;
            out[i] = sign | half;
        } else if (exponent >= 31) {
            out[i] = sign | 0x7bff;
        } else {
            let half = (exponent << 10) | (mantissa >> 13);
            if ((mantissa & 0x1000) && ((mantissa & 0x2fff) !== 0))
                half++;
            out[i] = sign | half;
        }
    }
    return out;
}

function writeScalar(out: ByteSink, type: ScalarType, value: number | boolean | string) {
    switch (type) {
        case ValueType.Uint32: out.uint32(value as number); break;
        case ValueType.Int32: out.int32(value as number); break;
        case ValueType.Float32: out.float32(value as number); break;
        case ValueType.Bool: out.uint8(value ? 1 : 0); break;
        case ValueType.String: out.string(value as string); break;
    }
}

function alignUp(value: number, alignment: number) {
    return Math.ceil(value / alignment) * alignment;
}

function assertIntegerInRange(key: string, value: number, min: number, max: number) {
    if (!Number.isInteger(value) || value < min || value > max)
        throw new Error(`Value ${value} for ${key} is not an integer in [${min}, ${max}]`);
}

/** Growable little-endian byte buffer for the (small) header. */
class ByteSink {
    private buffer = Buffer.alloc(64 * 1024);
    length = 0;

    uint8(value: number) {
        this.reserve(1);
        this.length = this.buffer.writeUInt8(value, this.length);
    }

    uint32(value: number) {
        this.reserve(4);
        this.length = this.buffer.writeUInt32LE(value, this.length);
    }

    int32(value: number) {
        this.reserve(4);
        this.length = this.buffer.writeInt32LE(value, this.length);
    }

    float32(value: number) {
        this.reserve(4);
        this.length = this.buffer.writeFloatLE(value, this.length);
    }

    uint64(value: number) {
        this.reserve(8);
        this.length = this.buffer.writeBigUInt64LE(BigInt(value), this.length);
    }

    string(value: string) {
        const bytes = Buffer.from(value, "utf8");
        this.uint64(bytes.byteLength);
        this.raw(bytes);
    }

    raw(bytes: Uint8Array) {
        this.reserve(bytes.byteLength);
        this.buffer.set(bytes, this.length);
        this.length += bytes.byteLength;
    }

    toBytes(): Uint8Array {
        return this.buffer.subarray(0, this.length);
    }

    private reserve(byteCount: number) {
        if (this.length + byteCount <= this.buffer.byteLength)
            return;

        const grown = Buffer.alloc(Math.max(this.buffer.byteLength * 2, this.length + byteCount));
        this.buffer.copy(grown, 0, 0, this.length);
        this.buffer = grown;
    }
}
