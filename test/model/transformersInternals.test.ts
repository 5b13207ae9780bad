import {
    AutoModel, AutoProcessor, AutoTokenizer, StyleTextToSpeech2Model, Tensor, VitsModel, WhisperForConditionalGeneration, type PreTrainedModel
} from "@huggingface/transformers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { transformersInternals } from "../../src/runtimes/onnx/transformersInternals.js";
import { offlineTransformers } from "../../src/runtimes/onnx/offlineTransformers.js";
import { tinyBertPath, tinyKokoroPath, tinyVitsPath, tinyWhisperPath } from "../support/testModels.js";

/**
 * Contract tests of src/runtimes/onnx/transformersInternals.ts: every function run on the generated tiny models, with
 * what the server relies on. When a transformers.js upgrade moves a field, the function throws naming it or the
 * assertion's message names it.
 */
const load = {local_files_only: true, device: "cpu", dtype: "fp32"} as const;

describe("transformersInternals on the installed @huggingface/transformers", () => {
    const models: PreTrainedModel[] = [];
    let whisper: WhisperForConditionalGeneration;

    beforeAll(async () => {
        offlineTransformers();
        whisper = await WhisperForConditionalGeneration.from_pretrained(tinyWhisperPath, load) as WhisperForConditionalGeneration;
        models.push(whisper);
    });
    afterAll(async () => {
        await Promise.all(models.map((model) => model.dispose()));
    });

    it("PreTrainedModel.config is the folder's config.json, model-specific fields included", async () => {
        const bert = await AutoModel.from_pretrained(tinyBertPath, load);
        models.push(bert);
        expect(transformersInternals.modelConfig(bert), "PreTrainedModel.config.max_position_embeddings").toMatchObject({max_position_embeddings: 64});
        expect(transformersInternals.modelConfig(whisper).max_target_positions, "PreTrainedModel.config.max_target_positions").toEqual(expect.any(Number));
    });

    it("PreTrainedModel.generation_config of a Whisper model has the tokens and rules of generation_config.json", () => {
        const config = transformersInternals.whisperGenerationConfig(whisper);
        expect(config, "WhisperGenerationConfig fields").toMatchObject({
            decoder_start_token_id: expect.any(Number), no_timestamps_token_id: expect.any(Number), is_multilingual: true,
            lang_to_id: expect.objectContaining({"<|en|>": expect.any(Number)}), alignment_heads: [[0, 0]]
        });
    });

    it("PreTrainedModel.sessions[name].inputNames / outputNames list what the ONNX files declare", async () => {
        expect(transformersInternals.sessionOutputNames(whisper, "decoder_model_merged"), "sessions.decoder_model_merged.outputNames")
            .toEqual(expect.arrayContaining(["logits", "cross_attentions.0"]));
        expect(transformersInternals.sessionInputNames(whisper, "no_such_session")).toEqual([]);
        const kokoro = await StyleTextToSpeech2Model.from_pretrained(tinyKokoroPath, load);
        models.push(kokoro);
        expect(transformersInternals.sessionInputNames(kokoro, "model"), "sessions.model.inputNames").toEqual(expect.arrayContaining(["input_ids", "style", "speed"]));
        const vits = await VitsModel.from_pretrained(tinyVitsPath, load);
        models.push(vits);
        expect(transformersInternals.sessionInputNames(vits, "model"), "sessions.model.inputNames").toEqual(expect.arrayContaining(["input_ids"]));
    });

    it("the tokenizer's model_max_length and pad_token_id come from the folder's tokenizer files", async () => {
        const bert = await AutoTokenizer.from_pretrained(tinyBertPath, {local_files_only: true});
        expect(transformersInternals.tokenizerMaxLength(bert), "PreTrainedTokenizer.model_max_length").toBe(64);
        const vits = await AutoTokenizer.from_pretrained(tinyVitsPath, {local_files_only: true});
        expect(transformersInternals.tokenizerPadTokenId(vits), "PreTrainedTokenizer.pad_token_id").toBe(0);
    });

    it("Whisper's encoder alone, one decoder pass over a prefix, the timestamp rules and generate with token timestamps work as the server calls them", async () => {
        const processor = await AutoProcessor.from_pretrained(tinyWhisperPath, {local_files_only: true});
        const {input_features} = await processor(new Float32Array(16_000)) as {input_features: Tensor};
        const hidden = await transformersInternals.whisperEncode(whisper, input_features);
        expect(hidden, "_encode_input(...) last_hidden_state").toBeInstanceOf(Tensor);
        expect(hidden.dims.length, "_encode_input(...) last_hidden_state rank").toBe(3);

        const generation = transformersInternals.whisperGenerationConfig(whisper);
        const start = generation.decoder_start_token_id;
        const logits = await transformersInternals.whisperDecoderLogits(whisper, hidden, [start, start]);
        const vocabulary = transformersInternals.modelConfig(whisper).vocab_size;
        expect(logits.dims, "forward(...).logits dims [1, prefix, vocabulary]").toEqual([1, 2, vocabulary]);

        const steps: bigint[][][] = [];
        const output = await transformersInternals.whisperGenerate(whisper, {
            inputs: input_features, encoder_outputs: hidden, decoder_input_ids: [start], return_timestamps: false, begin_suppress_tokens: null,
            max_new_tokens: 3, do_sample: false,
            logits_processor: [transformersInternals.whisperTimestampProcessor({
                eos_token_id: generation.eos_token_id, no_timestamps_token_id: generation.no_timestamps_token_id, max_initial_timestamp_index: null
            }, [start])],
            stopping_criteria: [(ids) => ids.map(() => false)],
            streamer: {put: (value) => steps.push(value), end() {}},
            return_token_timestamps: true, alignment_heads: generation.alignment_heads, num_frames: 50
        });
        expect(steps.length, "generate(...) streamer.put calls: the prompt, then one per token").toBeGreaterThanOrEqual(2);
        expect(output.token_timestamps, "generate(...).token_timestamps").toBeInstanceOf(Tensor);
    });

    it("a field that is gone is named in the error", () => {
        const bare = {} as PreTrainedModel;
        expect(() => transformersInternals.sessionInputNames(bare, "model")).toThrow("PreTrainedModel.sessions");
        expect(() => transformersInternals.modelConfig(bare)).toThrow("PreTrainedModel.config");
        expect(() => transformersInternals.whisperGenerationConfig(bare as WhisperForConditionalGeneration)).toThrow("PreTrainedModel.generation_config");
    });
});
