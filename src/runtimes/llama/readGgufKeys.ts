import fs from "node:fs";

/** A scalar GGUF metadata value (arrays are skipped, not read). */
export type GgufScalar = number | bigint | boolean | string;

/** GGUF value types (ggml's gguf_type). */
const ValueType = {Uint8: 0, Int8: 1, Uint16: 2, Int16: 3, Uint32: 4, Int32: 5, Float32: 6, Bool: 7, String: 8, Array: 9, Uint64: 10, Int64: 11, Float64: 12} as const;
type ValueType = typeof ValueType[keyof typeof ValueType];
const fixedSizes: Partial<Record<number, number>> = {
    [ValueType.Uint8]: 1, [ValueType.Int8]: 1, [ValueType.Bool]: 1, [ValueType.Uint16]: 2, [ValueType.Int16]: 2,
    [ValueType.Uint32]: 4, [ValueType.Int32]: 4, [ValueType.Float32]: 4, [ValueType.Uint64]: 8, [ValueType.Int64]: 8, [ValueType.Float64]: 8
};

/** Bytes read from the file at a time. */
const windowBytes = 64 * 1024;
/** A key or string longer than this is not a GGUF written by llama.cpp's tools: the file is refused. */
const maxStringBytes = 16 * 1024 * 1024;

/**
 * The scalar metadata values of a GGUF file's `wanted` keys (those it has), read from its header without reading
 * the rest: the key-value section is walked in 64 KB windows, arrays (the tokenizer's vocabulary: most of a header)
 * skipped by their lengths, and the walk stops once `complete` says what was found is enough (or the keys end). For recognising a model's task when a
 * folder of them is scanned at start (`npm start -- ~/models/`): node-llama-cpp's readGgufFileInfo reads and parses
 * the whole header, 4 MB at a time (about 60 ms a file on the 2-core test machine, and importing node-llama-cpp
 * first), this a few milliseconds. Throws an Error saying what is wrong for a file that is not a GGUF (v2 or v3).
 */
export function readGgufKeys(file: string, wanted: (key: string) => boolean, complete: (found: ReadonlyMap<string, GgufScalar>) => boolean): Map<string, GgufScalar> {
    const found = new Map<string, GgufScalar>();
    const fd = fs.openSync(file, "r");
    try {
        const reader = new WindowReader(fd, fs.fstatSync(fd).size);
        if (reader.string(4) !== "GGUF")
            throw new Error("not a GGUF file (no GGUF magic)");
        const version = reader.uint32();
        if (version !== 2 && version !== 3)
            throw new Error(`GGUF version ${version} is not supported`);
        reader.uint64(); // tensor count
        const count = reader.uint64();
        for (let index = 0; index < count && !complete(found); index++) {
            const key = reader.string(reader.length());
            const type = reader.uint32() as ValueType;
            if (type !== ValueType.Array && wanted(key))
                found.set(key, reader.scalar(type));
            else
                reader.skipValue(type);
        }
        return found;
    } finally {
        fs.closeSync(fd);
    }
}

/** Little-endian reads at a moving offset through a window of the file. */
class WindowReader {
    private window = Buffer.alloc(0);
    private windowStart = 0;
    private offset = 0;

    constructor(private readonly fd: number, private readonly size: number) {}

    uint32(): number {
        return this.view(4).readUInt32LE(0);
    }

    uint64(): number {
        const value = this.view(8).readBigUInt64LE(0);
        if (value > BigInt(Number.MAX_SAFE_INTEGER))
            throw new Error("a GGUF count or length is out of range");
        return Number(value);
    }

    /** A string's or array's length, bounded. */
    length(): number {
        const length = this.uint64();
        if (length > maxStringBytes)
            throw new Error(`a GGUF string of ${length} bytes`);
        return length;
    }

    string(length: number): string {
        return this.view(length).toString("utf8");
    }

    scalar(type: ValueType): GgufScalar {
        switch (type) {
            case ValueType.Uint8: return this.view(1).readUInt8(0);
            case ValueType.Int8: return this.view(1).readInt8(0);
            case ValueType.Bool: return this.view(1).readUInt8(0) !== 0;
            case ValueType.Uint16: return this.view(2).readUInt16LE(0);
            case ValueType.Int16: return this.view(2).readInt16LE(0);
            case ValueType.Uint32: return this.view(4).readUInt32LE(0);
            case ValueType.Int32: return this.view(4).readInt32LE(0);
            case ValueType.Float32: return this.view(4).readFloatLE(0);
            case ValueType.Uint64: return this.view(8).readBigUInt64LE(0);
            case ValueType.Int64: return this.view(8).readBigInt64LE(0);
            case ValueType.Float64: return this.view(8).readDoubleLE(0);
            case ValueType.String: return this.string(this.length());
            default: throw new Error(`GGUF value type ${type} is not a scalar`);
        }
    }

    skipValue(type: ValueType): void {
        if (type === ValueType.String)
            return this.skip(this.length());
        if (type !== ValueType.Array) {
            const size = fixedSizes[type];
            if (size == null)
                throw new Error(`unknown GGUF value type ${type}`);
            return this.skip(size);
        }
        const elementType = this.uint32() as ValueType;
        const count = this.uint64();
        if (elementType === ValueType.String || elementType === ValueType.Array)
            for (let index = 0; index < count; index++)
                this.skipValue(elementType);
        else {
            const size = fixedSizes[elementType];
            if (size == null)
                throw new Error(`unknown GGUF value type ${elementType}`);
            this.skip(size * count);
        }
    }

    private skip(bytes: number) {
        if (this.offset + bytes > this.size)
            throw new Error("the GGUF header ends before its metadata does");
        this.offset += bytes;
    }

    /** `bytes` bytes at the offset (moving past them), read into the window when they are not in it. */
    private view(bytes: number): Buffer {
        if (this.offset + bytes > this.size)
            throw new Error("the GGUF header ends before its metadata does");
        if (this.offset < this.windowStart || this.offset + bytes > this.windowStart + this.window.length) {
            const length = Math.min(Math.max(windowBytes, bytes), this.size - this.offset);
            const window = Buffer.allocUnsafe(length);
            fs.readSync(this.fd, window, 0, length, this.offset);
            this.window = window;
            this.windowStart = this.offset;
        }
        const start = this.offset - this.windowStart;
        this.offset += bytes;
        return this.window.subarray(start, start + bytes);
    }
}
