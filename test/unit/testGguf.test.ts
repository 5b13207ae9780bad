import {randomUUID} from "node:crypto";
import {mkdir, readFile, rm} from "node:fs/promises";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {describe, it, expect, beforeAll, afterAll} from "vitest";
import {getLlama, LlamaLogLevel, readGgufFileInfo, type Llama, type LlamaContext, type LlamaModel, type Token} from "node-llama-cpp";
import {GgufWriter} from "../support/gguf/GgufWriter.js";
import {defaultTestChatTemplate, makeTestLlamaGguf, testLlamaTokens} from "../support/gguf/makeTestLlamaGguf.js";

const modelsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../.models");
const writtenFiles: string[] = [];

function uniqueModelPath(label: string) {
    const filePath = path.join(modelsDir, `testGguf-${label}-${process.pid}-${randomUUID()}.gguf`);
    writtenFiles.push(filePath);
    return filePath;
}

beforeAll(async () => {
    await mkdir(modelsDir, {recursive: true});
});

afterAll(async () => {
    await Promise.all(writtenFiles.map((filePath) => rm(filePath, {force: true})));
});

describe("GgufWriter", () => {
    it("writes metadata of every supported type and aligned F32 tensors", async () => {
        const filePath = uniqueModelPath("writer");
        const oddTensor = new Float32Array([1, 2, 3]); // 12 bytes: forces padding before the next tensor

        const bytesWritten = await new GgufWriter()
            .addString("general.architecture", "llama")
            .addUint32("test.uint32", 4_000_000_000)
            .addInt32("test.int32", -7)
            .addFloat32("test.float32", 0.5)
            .addBool("test.bool", true)
            .addStringArray("test.strings", ["a", "▁b", "🦙"])
            .addFloat32Array("test.floats", [0.25, -1.5])
            .addInt32Array("test.ints", [-1, 2])
            .addUint32Array("test.uints", [3, 4])
            .addF32Tensor("odd", [3], oddTensor)
            .addF32Tensor("matrix", [2, 3], (target) => target.forEach((_, i) => target[i] = i))
            .write(filePath);

        const info = await readGgufFileInfo(filePath, {logWarnings: false});
        const metadata = info.metadata as unknown as Record<string, Record<string, unknown>>;

        expect(info.version).toBe(3);
        expect(metadata.general.alignment).toBe(32);
        expect(metadata.test).toEqual({
            uint32: 4_000_000_000,
            int32: -7,
            float32: 0.5,
            bool: true,
            strings: ["a", "▁b", "🦙"],
            floats: [0.25, -1.5],
            ints: [-1, 2],
            uints: [3, 4]
        });

        const tensors = info.tensorInfo ?? [];
        expect(tensors.map((tensor) => [tensor.name, tensor.dimensions.map(Number), Number(tensor.offset)]))
            .toEqual([["odd", [3], 0], ["matrix", [2, 3], 32]]);

        const file = await readFile(filePath);
        expect(file.byteLength).toBe(bytesWritten);

        const dataStart = Number(tensors[0].fileOffset);
        expect(dataStart % 32).toBe(0);
        const floatsAt = (offset: number, count: number) =>
            [...new Float32Array(file.buffer.slice(file.byteOffset + dataStart + offset, file.byteOffset + dataStart + offset + count * 4))];

        expect(floatsAt(0, 3)).toEqual([1, 2, 3]);
        expect(floatsAt(32, 6)).toEqual([0, 1, 2, 3, 4, 5]);
    });

    it("rejects duplicate keys and mismatched tensor sizes", () => {
        const writer = new GgufWriter().addUint32("a", 1);

        expect(() => writer.addUint32("a", 2)).toThrow(/Duplicate/);
        expect(() => writer.addUint32("b", -1)).toThrow();
        expect(() => writer.addF32Tensor("t", [2, 2], new Float32Array(3))).toThrow();
    });
});

describe("makeTestLlamaGguf", () => {
    let llama: Llama;
    let model: LlamaModel;
    let context: LlamaContext;
    let modelPath: string;

    beforeAll(async () => {
        modelPath = uniqueModelPath("tiny");
        await makeTestLlamaGguf(modelPath);

        llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
        model = await llama.loadModel({modelPath});
        // The default thread count is very slow on small CI machines.
        context = await model.createContext({contextSize: 256, threads: 1});
    });

    afterAll(async () => {
        await context?.dispose();
        await model?.dispose();
    });

    async function generateGreedy(prompt: string, count: number) {
        const sequence = context.getSequence();

        try {
            const generated: Token[] = [];
            for await (const token of sequence.evaluate([model.tokens.bos!, ...model.tokenize(prompt)], {temperature: 0})) {
                generated.push(token);
                if (generated.length >= count)
                    break;
            }

            return generated;
        } finally {
            sequence.dispose();
        }
    }

    it("exposes the chat template", () => {
        const metadata = model.fileInfo.metadata as {tokenizer: {chat_template?: string}};

        expect(metadata.tokenizer.chat_template).toBe(defaultTestChatTemplate);
    });

    it("uses the GGUF dimension order for the tensors", () => {
        const vocabSize = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
        const dimensions = new Map(model.fileInfo.tensorInfo!.map((tensor) => [tensor.name, tensor.dimensions.map(Number)]));

        expect(dimensions.get("token_embd.weight")).toEqual([64, vocabSize]);
        expect(dimensions.get("output.weight")).toEqual([64, vocabSize]);
        expect(dimensions.get("blk.1.attn_k.weight")).toEqual([64, 32]);
        expect(dimensions.get("blk.1.ffn_down.weight")).toEqual([128, 64]);
    });

    it("tokenizes English into multi-character pieces that round-trip", () => {
        const text = "Hello world, once upon a time";
        const tokens = model.tokenize(text);

        expect(tokens.length).toBeLessThan(10);
        expect(model.detokenize(tokens)).toBe(text);
    });

    it("falls back to byte tokens for emoji and CJK", () => {
        const text = "llama 🦙 说你好";
        const tokens = model.tokenize(text);
        const firstByte = testLlamaTokens.firstByte.id;

        expect(tokens.some((token) => token >= firstByte && token < firstByte + 256)).toBe(true);
        expect(tokens).not.toContain(testLlamaTokens.unk.id);
        expect(model.detokenize(tokens)).toBe(text);
    });

    it("only parses special token text when asked to", () => {
        expect(model.tokenize(testLlamaTokens.imStart.text, true)).toEqual([testLlamaTokens.imStart.id]);

        const plain = model.tokenize(testLlamaTokens.imStart.text);
        expect(plain.length).toBeGreaterThan(1);
        expect(plain).not.toContain(testLlamaTokens.imStart.id);
    });

    it("uses <s> as BOS and <|im_end|> as EOS", () => {
        expect(model.tokens.bos).toBe(testLlamaTokens.bos.id);
        expect(model.tokens.eos).toBe(testLlamaTokens.imEnd.id);
        expect(model.isEogToken(model.tokens.eos!)).toBe(true);
    });

    it("generates deterministic, non-degenerate greedy output", async () => {
        const first = await generateGreedy("Once upon a time", 30);
        const second = await generateGreedy("Once upon a time", 30);

        expect(first).toHaveLength(30);
        expect(second).toEqual(first);
        expect(new Set(first).size).toBeGreaterThan(5);
    });

    it("writes byte-identical files for the same seed only", async () => {
        const [a, b, c] = [uniqueModelPath("seed1a"), uniqueModelPath("seed1b"), uniqueModelPath("seed2")];
        await Promise.all([makeTestLlamaGguf(a, {seed: 1}), makeTestLlamaGguf(b, {seed: 1}), makeTestLlamaGguf(c, {seed: 2})]);
        const [bytesA, bytesB, bytesC] = await Promise.all([readFile(a), readFile(b), readFile(c)]);

        expect(bytesA.equals(bytesB)).toBe(true);
        expect(bytesA.byteLength).toBe(bytesC.byteLength);
        expect(bytesA.equals(bytesC)).toBe(false);
    });

    it("leaves out the chat template when it is null", async () => {
        const filePath = uniqueModelPath("no-template");
        await makeTestLlamaGguf(filePath, {chatTemplate: null});
        const info = await readGgufFileInfo(filePath, {logWarnings: false});

        expect(info.metadata.tokenizer).not.toHaveProperty("chat_template");
    });

    it("makes extraVocab pieces reachable by the tokenizer", async () => {
        const filePath = uniqueModelPath("extra-vocab");
        await makeTestLlamaGguf(filePath, {extraVocab: ["▁llamafication"]});
        const extraModel = await llama.loadModel({modelPath: filePath});

        try {
            const tokens = extraModel.tokenize("llamafication");
            expect(tokens).toHaveLength(1);
            expect(extraModel.detokenize(tokens)).toBe("llamafication");
        } finally {
            await extraModel.dispose();
        }
    });
});
