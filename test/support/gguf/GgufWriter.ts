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
    addF32Tensor(name: string, shape: readonly number[], data: F32TensorData): this {
        if (this.tensors.some((tensor) => tensor.name === name))
            throw new Error(`Duplicate tensor name: ${name}`);

        if (shape.length === 0 || shape.length > 4 || shape.some((dim) => !Number.isInteger(dim) || dim <= 0))
            throw new Error(`Invalid shape for tensor ${name}: [${shape.join(", ")}]`);

        const elementCount = shape.reduce((product, dim) => product * dim, 1);
        if (data instanceof Float32Array && data.length !== elementCount)
            throw new Error(`Tensor ${name} has ${data.length} values but its shape needs ${elementCount}`);

        this.tensors.push({name, shape: [...shape], elementCount, data, offset: this.nextTensorOffset});
        this.nextTensorOffset += alignUp(elementCount * Float32Array.BYTES_PER_ELEMENT, this.alignment);

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
                const values = resolveTensorData(tensor);
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

            out.uint32(GGML_TYPE_F32);
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
