import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readGgufFileInfo } from "node-llama-cpp";
import { afterAll, describe, expect, it } from "vitest";
import { readGgufKeys } from "../../src/runtimes/llama/readGgufKeys.js";
import { GgufWriter } from "../support/gguf/GgufWriter.js";
import { storiesModelPath, tinyChatModelPath, tinyToolsModelPath } from "../support/testModels.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-gguf-keys-"));
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

/** node-llama-cpp's metadata as flat `a.b.c` keys, scalars only (what readGgufKeys reads). */
function flatScalars(value: unknown, prefix = "", into = new Map<string, unknown>()): Map<string, unknown> {
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        for (const [key, inner] of Object.entries(value))
            flatScalars(inner, prefix === "" ? key : `${prefix}.${key}`, into);
    } else if (!Array.isArray(value))
        into.set(prefix, value);
    return into;
}

describe("readGgufKeys", () => {
    it("reads every scalar key as node-llama-cpp's readGgufFileInfo does, skipping the arrays", async () => {
        for (const file of [storiesModelPath, tinyChatModelPath, tinyToolsModelPath].filter((candidate) => fs.existsSync(candidate))) {
            const expected = flatScalars((await readGgufFileInfo(file, {readTensorInfo: false, logWarnings: false})).metadata);
            const read = readGgufKeys(file, () => true, () => false);
            expect(new Map([...read].map(([key, value]) => [key, typeof value === "bigint" ? Number(value) : value])), file).toEqual(expected);
        }
    });

    it("stops once what it found is enough: a key after the vocabulary is not reached", async () => {
        const file = path.join(dir, "order.gguf");
        await new GgufWriter().addString("general.architecture", "llama").addStringArray("tokenizer.ggml.tokens", ["a", "b"])
            .addString("llama.later", "x").write(file);
        const early = readGgufKeys(file, () => true, (found) => found.has("general.architecture"));
        expect(early.get("general.architecture")).toBe("llama");
        expect(early.has("llama.later")).toBe(false);
        expect(readGgufKeys(file, (key) => key === "llama.later", () => false).get("llama.later")).toBe("x");
    });

    it("a file that is not a GGUF, or one cut short, is an error saying so", async () => {
        const text = path.join(dir, "text.gguf");
        fs.writeFileSync(text, "not a gguf at all");
        expect(() => readGgufKeys(text, () => true, () => false)).toThrow("not a GGUF file");
        const whole = fs.readFileSync(tinyChatModelPath);
        const cut = path.join(dir, "cut.gguf");
        fs.writeFileSync(cut, whole.subarray(0, 200));
        expect(() => readGgufKeys(cut, () => true, () => false)).toThrow("the GGUF header ends before its metadata does");
    });
});
