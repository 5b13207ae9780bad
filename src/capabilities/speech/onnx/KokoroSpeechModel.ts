import fs from "node:fs/promises";
import path from "node:path";
import { AutoTokenizer, StyleTextToSpeech2Model, Tensor, type PreTrainedModel, type PreTrainedTokenizer } from "@huggingface/transformers";
import { splitAtLength } from "../splitAtLength.js";
import type { LoadedSpeechModel } from "./LoadedSpeechModel.js";
import { phonemizeEnglish } from "./phonemizeEnglish.js";
import { sessionOptions } from "../../../runtimes/onnx/sessionOptions.js";
import { transformersInternals } from "../../../runtimes/onnx/transformersInternals.js";
import type { SpeechModelDescription, SpeechModelSpec } from "./speechWorkerProtocol.js";

/** Kokoro's style vectors: 256 wide, one row per input length 0..509. */
const styleWidth = 256;
const styleRows = 510;
/** Phoneme tokens per forward pass (512 with the two pads: the model's positions). */
const maxPhonemeTokens = 510;
const sampleRate = 24_000;
/** Voice name prefixes of Kokoro's non-English voices (e, f, h, i, j, p, z + f/m): espeak here speaks English only. */
const nonEnglishVoice = /^[efhijpz][fm]_/u;

/**
 * Kokoro-82M (StyleTTS2) through transformers.js's `StyleTextToSpeech2Model`, the way kokoro-js
 * drives it: text -> espeak phonemes -> the tokenizer's phoneme ids with "$" (0) at both ends ->
 * `input_ids` [1, n], `style` = row (n - 2) of the voice's [510, 256] table, `speed` [1] ->
 * `waveform` at 24 kHz.
 */
export class KokoroSpeechModel implements LoadedSpeechModel {
    private readonly styles = new Map<string, Promise<Float32Array>>();

    /** The pad ("$") and the space: a sequence of nothing else says nothing (emoji between spaces leave just those). */
    private readonly silentIds: ReadonlySet<number>;

    private constructor(readonly description: SpeechModelDescription, private readonly folder: string,
        private readonly tokenizer: PreTrainedTokenizer, private readonly model: PreTrainedModel) {
        this.silentIds = new Set(tokenizer.encode(" "));
    }

    static async load(spec: SpeechModelSpec): Promise<KokoroSpeechModel> {
        const tokenizer = await AutoTokenizer.from_pretrained(spec.folder, {local_files_only: true});
        const model = await StyleTextToSpeech2Model.from_pretrained(spec.folder, {
            local_files_only: true, device: "cpu", dtype: spec.dtype as "fp32",
            ...(spec.modelFileName != null ? {model_file_name: spec.modelFileName} : {}),
            session_options: sessionOptions(spec.threads)
        });
        const files = await fs.readdir(path.join(spec.folder, "voices")).catch(() => [] as string[]);
        const voices = files.filter((file) => file.endsWith(".bin")).map((file) => file.slice(0, -4))
            .filter((voice) => !nonEnglishVoice.test(voice)).sort();
        if (voices.length === 0)
            throw new Error(`Kokoro model folder ${spec.folder} has no English voice tables (voices/a*_*.bin or b*_*.bin, float32 [510, 256]).`);
        const inputNames = transformersInternals.sessionInputNames(model, "model");
        const description: SpeechModelDescription = {
            modelType: "kokoro", sampleRate, voices,
            defaultVoice: voices.includes("af_heart") ? "af_heart" : voices[0],
            hasSpeedInput: inputNames.includes("speed"),
            // About 1.1 phonemes per character of English prose: 400 characters leave room under 510 tokens.
            maxSentenceChars: 400
        };
        // espeak's first call instantiates and compiles its WebAssembly (~0.8 s of CPU here); pay it
        // while loading, not in a client's first request.
        await phonemizeEnglish(["Ready."], false);
        return new KokoroSpeechModel(description, spec.folder, tokenizer, model);
    }

    async tokenize(sentences: readonly string[], voice: string): Promise<number[][][]> {
        const phonemes = await phonemizeEnglish(sentences, voice.startsWith("b"));
        // One token per phoneme character at most (symbols outside the vocabulary are dropped), so
        // pieces of at most 510 characters, cut at word boundaries, fit one forward pass each. A piece of
        // nothing but spaces (what is left of "😀 🎉") is not spoken; punctuation is (a pause, in the vocabulary).
        return phonemes.map((sentence) => splitAtLength(sentence, maxPhonemeTokens)
            .map((piece) => this.tokenizer.encode(piece))
            .filter((ids) => ids.some((id) => !this.silentIds.has(id))));
    }

    countTokens(ids: number[]): number {
        return Math.max(0, ids.length - 2);
    }

    async generate(ids: number[], voice: string, speed: number): Promise<Float32Array> {
        const table = await this.style(voice);
        const row = Math.min(this.countTokens(ids), styleRows - 1);
        const inputs: Record<string, Tensor> = {
            input_ids: new Tensor("int64", BigInt64Array.from(ids, BigInt), [1, ids.length]),
            style: new Tensor("float32", table.slice(row * styleWidth, (row + 1) * styleWidth), [1, styleWidth])
        };
        if (this.description.hasSpeedInput)
            inputs.speed = new Tensor("float32", Float32Array.of(speed), [1]);
        const {waveform} = await this.model(inputs) as {waveform: Tensor};
        return Float32Array.from(waveform.data as Float32Array);
    }

    private style(voice: string): Promise<Float32Array> {
        let table = this.styles.get(voice);
        if (table == null) {
            table = this.readStyle(voice);
            this.styles.set(voice, table);
            table.catch(() => this.styles.delete(voice));
        }
        return table;
    }

    private async readStyle(voice: string): Promise<Float32Array> {
        if (!this.description.voices.includes(voice))
            throw new Error(`Unknown voice '${voice}'; the model has ${this.description.voices.join(", ")}.`);
        const file = path.join(this.folder, "voices", `${voice}.bin`);
        const bytes = await fs.readFile(file);
        if (bytes.byteLength !== styleRows * styleWidth * 4)
            throw new Error(`Voice table ${file} has ${bytes.byteLength} bytes; a Kokoro voice is float32 [${styleRows}, ${styleWidth}] (${styleRows * styleWidth * 4} bytes).`);
        // Copied into an aligned buffer of its own (a Buffer may share a pool at any offset).
        return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    }

    async dispose(): Promise<void> {
        await this.model.dispose();
    }
}
