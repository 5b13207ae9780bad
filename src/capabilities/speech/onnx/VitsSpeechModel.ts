import { AutoTokenizer, Tensor, VitsModel, type PreTrainedModel, type PreTrainedTokenizer } from "@huggingface/transformers";
import type { LoadedSpeechModel } from "./LoadedSpeechModel.js";
import { sessionOptions } from "../../../runtimes/onnx/sessionOptions.js";
import { transformersInternals } from "../../../runtimes/onnx/transformersInternals.js";
import type { SpeechModelDescription, SpeechModelSpec } from "./speechWorkerProtocol.js";

/** The one voice of a single-speaker model. */
const singleVoice = "default";

/**
 * A VITS model (MMS-TTS exports for transformers.js) through `VitsModel`: the character tokenizer
 * (lower case, unknown characters dropped, a blank between characters), `input_ids` and
 * `attention_mask` -> `waveform` at config.json's `sampling_rate` (16 kHz for MMS). One speaker, no
 * speed input (the API layer time-stretches).
 */
export class VitsSpeechModel implements LoadedSpeechModel {
    /** The blank and the space: a sequence of nothing else says nothing. */
    private readonly silentIds: ReadonlySet<number>;

    private constructor(readonly description: SpeechModelDescription, private readonly tokenizer: PreTrainedTokenizer,
        private readonly model: PreTrainedModel, private readonly blankId: number | null) {
        this.silentIds = new Set([...tokenizer.encode(" "), ...blankId != null ? [blankId] : []]);
    }

    static async load(spec: SpeechModelSpec, config: Record<string, unknown>): Promise<VitsSpeechModel> {
        const tokenizer = await AutoTokenizer.from_pretrained(spec.folder, {local_files_only: true});
        const model = await VitsModel.from_pretrained(spec.folder, {
            local_files_only: true, device: "cpu", dtype: spec.dtype as "fp32",
            ...(spec.modelFileName != null ? {model_file_name: spec.modelFileName} : {}),
            session_options: sessionOptions(spec.threads)
        });
        const sampleRate = typeof config.sampling_rate === "number" ? config.sampling_rate : 16_000;
        const blank = transformersInternals.tokenizerPadTokenId(tokenizer);
        const description: SpeechModelDescription = {
            modelType: "vits", sampleRate, voices: [singleVoice], defaultVoice: singleVoice, hasSpeedInput: false,
            maxSentenceChars: 300
        };
        return new VitsSpeechModel(description, tokenizer, model, blank);
    }

    async tokenize(sentences: readonly string[]): Promise<number[][][]> {
        return sentences.map((sentence) => {
            const ids = this.tokenizer.encode(sentence);
            return ids.some((id) => !this.silentIds.has(id)) ? [ids] : [];
        });
    }

    countTokens(ids: number[]): number {
        return ids.filter((id) => id !== this.blankId).length;
    }

    async generate(ids: number[]): Promise<Float32Array> {
        const dims = [1, ids.length];
        const {waveform} = await this.model({
            input_ids: new Tensor("int64", BigInt64Array.from(ids, BigInt), dims),
            attention_mask: new Tensor("int64", new BigInt64Array(ids.length).fill(1n), dims)
        }) as {waveform: Tensor};
        return Float32Array.from(waveform.data as Float32Array);
    }

    async dispose(): Promise<void> {
        await this.model.dispose();
    }
}
