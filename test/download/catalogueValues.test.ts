import { describe, expect, it } from "vitest";
import { loadCatalogue } from "../../src/download/loadCatalogue.js";

/** Files the hub stores in LFS: the weights. Their sha256 is published on the hub and must be pinned. */
const isWeights = (filePath: string) => /\.(gguf|onnx|onnx_data|safetensors|bin)$/.test(filePath);

/**
 * The catalogue's values, apart from its shape (catalogue.test.ts): every entry is pinned to a real
 * commit and every weights file to the sha256 the hub publishes for it (sources in
 * docs/research/model-catalogue-sources.md). Small git-tracked text files (config.json,
 * tokenizer.json) have no hub-published sha256; their hash is recorded at download.
 */
describe("catalogue values", () => {
    it("every entry has a real pinned revision, and every weights file its sha256", () => {
        const missing: string[] = [];
        for (const entry of loadCatalogue()) {
            if (/^0+$/.test(entry.revision))
                missing.push(`${entry.id}: revision is a placeholder (all zeros)`);
            for (const file of entry.files.filter((candidate) => isWeights(candidate.path))) {
                if (file.sha256 == null)
                    missing.push(`${entry.id}: ${file.path} has no sha256`);
            }
            if (!entry.files.some((file) => isWeights(file.path)))
                missing.push(`${entry.id}: no weights file`);
        }
        expect(missing, `catalogue values to verify:\n  ${missing.join("\n  ")}\n`).toEqual([]);
    });

    it("a speech model brings its default voice, and every voice table is float32 [510, 256]", () => {
        for (const entry of loadCatalogue().filter((candidate) => candidate.task === "speech")) {
            const voices = entry.files.filter((file) => /^voices\/[^/]+\.bin$/.test(file.path));
            expect(voices.length, entry.id).toBeGreaterThan(0);
            for (const voice of voices)
                expect(voice.size, voice.path).toBe(510 * 256 * 4);
            if (entry.manifest.defaultVoice != null)
                expect(voices.map((file) => file.path), entry.id).toContain(`voices/${entry.manifest.defaultVoice}.bin`);
        }
    });
});
