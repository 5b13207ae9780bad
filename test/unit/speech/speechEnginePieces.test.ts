import { describe, expect, it } from "vitest";
import { fadeEdges } from "../../../src/capabilities/speech/onnx/fadeEdges.js";
import { normalizeEnglishText } from "../../../src/capabilities/speech/onnx/normalizeEnglishText.js";
import { resolveVoices } from "../../../src/capabilities/speech/onnx/resolveVoices.js";
import type { SpeechModelDescription } from "../../../src/capabilities/speech/onnx/speechWorkerProtocol.js";
import { speechManifest } from "../../../src/capabilities/speech/speechManifest.js";

describe("fadeEdges", () => {
    it("brings both ends to zero over 5 ms and leaves the middle untouched", () => {
        const samples = new Float32Array(2400).fill(0.8);
        fadeEdges(samples, 24_000);
        expect(samples[0]).toBe(0);
        expect(samples[2399]).toBe(0);
        // 120 samples = 5 ms at 24 kHz: rising monotonically, then the model's own samples.
        for (let index = 1; index < 120; index++)
            expect(samples[index]).toBeGreaterThan(samples[index - 1]);
        expect(samples.subarray(120, 2280).every((value) => value === Math.fround(0.8))).toBe(true);
        // Two sentences joined: no step bigger than the fade's own slope at the seam.
        const joined = [...fadeEdges(new Float32Array(1000).fill(-0.9), 24_000), ...fadeEdges(new Float32Array(1000).fill(0.9), 24_000)];
        const steps = joined.slice(1).map((value, index) => Math.abs(value - joined[index]));
        expect(Math.max(...steps.slice(990, 1010))).toBeLessThan(0.03);
    });

    it("handles audio shorter than two fades", () => {
        expect([...fadeEdges(Float32Array.of(1, 1, 1), 24_000)]).toEqual([0, 1, 0]);
        expect(fadeEdges(new Float32Array(0), 24_000)).toHaveLength(0);
    });
});

describe("normalizeEnglishText", () => {
    it("reads money, times, years, decimals, thousands and ranges like a person", () => {
        expect(normalizeEnglishText("It costs $3.50, not £1 or $20.")).toBe("It costs 3 dollars and 50 cents, not 1 pound or 20 dollars.");
        expect(normalizeEnglishText("Meet at 3:05 or 10:00.")).toBe("Meet at 3 oh 5 or 10 o'clock.");
        expect(normalizeEnglishText("In 1984, the 1990s, 2005 and 2024.")).toBe("In 19 84, the 19 90s, 2005 and 20 24.");
        expect(normalizeEnglishText("Pi is 3.14 and .5 too; 1,000,000 people; pages 5-10.")).toBe("Pi is 3 point 1 4 and 0 point 5 too; 1000000 people; pages 5 to 10.");
    });

    it("spells out titles and abbreviations, unifies quotes and CJK punctuation", () => {
        expect(normalizeEnglishText("Dr. Smith met Mr. Jones, e.g. at St. Paul\u2019s etc.")).toBe("Doctor Smith met Mister Jones, for example at Saint Paul's etcetera.");
        expect(normalizeEnglishText("\u00ABHi\u00BB\uFF0Cyes\u3002")).toBe("\"Hi\", yes.");
    });
});

describe("resolveVoices", () => {
    const kokoro: SpeechModelDescription = {
        modelType: "kokoro", sampleRate: 24_000, voices: ["af_heart", "af_nova", "am_onyx"], defaultVoice: "af_heart", hasSpeedInput: true, maxSentenceChars: 400
    };
    const settings = {dtype: null, defaultVoice: null, voices: {}};

    it("offers the OpenAI names whose Kokoro voice exists, the manifest's over them", () => {
        expect(resolveVoices("k", kokoro, settings)).toEqual({voiceAliases: {nova: "af_nova", onyx: "am_onyx", marin: "af_heart"}, defaultVoice: "af_heart"});
        expect(resolveVoices("k", kokoro, {...settings, voices: {nova: "am_onyx", narrator: "af_heart"}, defaultVoice: "narrator"}))
            .toEqual({voiceAliases: {nova: "am_onyx", onyx: "am_onyx", marin: "af_heart", narrator: "af_heart"}, defaultVoice: "af_heart"});
    });

    it("maps every OpenAI name to a one-speaker model's voice, and rejects manifest values naming no voice", () => {
        const vits: SpeechModelDescription = {...kokoro, modelType: "vits", voices: ["default"], defaultVoice: "default", hasSpeedInput: false};
        const {voiceAliases} = resolveVoices("v", vits, settings);
        expect(Object.keys(voiceAliases)).toEqual(["alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse", "marin", "cedar"]);
        expect(() => resolveVoices("v", vits, {...settings, defaultVoice: "bob"})).toThrow("Model 'v': manifest field 'defaultVoice'");
        expect(() => resolveVoices("k", kokoro, {...settings, voices: {alloy: "af_alloy"}})).toThrow("Model 'k': manifest field 'voices.alloy'");
    });

    it("accepts Kokoro's file-only dtypes in the manifest", () => {
        expect((speechManifest.properties.dtype as {enum: string[]}).enum).toEqual(expect.arrayContaining(["q8", "fp32", "q8f16", "uint8f16"]));
    });
});
