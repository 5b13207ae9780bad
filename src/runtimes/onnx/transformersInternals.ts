import { Tensor, WhisperTimeStampLogitsProcessor, type PreTrainedModel, type PreTrainedTokenizer, type WhisperForConditionalGeneration } from "@huggingface/transformers";

/**
 * The one file that reaches past @huggingface/transformers' declared types: fields it declares
 * loosely (`any`, a base class's type) or not at all, and private methods. Each function names the
 * field it reads and throws naming it when the field is gone, and test/model/transformersInternals.test.ts
 * runs every one on the generated tiny models, so an upgrade that moves one fails there first.
 */

/** generation_config.json of a Whisper model, the fields read here (transformers.js declares the base GenerationConfig). */
export type WhisperGenerationConfig = {
    decoder_start_token_id: number; eos_token_id: number | number[]; no_timestamps_token_id: number;
    is_multilingual?: boolean; lang_to_id?: Record<string, number>; task_to_id?: Record<string, number>;
    begin_suppress_tokens?: number[] | null; max_initial_timestamp_index?: number | null; alignment_heads?: [number, number][] | null;
};

/**
 * What `whisperGenerate` passes to `generate`: the encoder's output and the decoder prompt given
 * directly, processors and stopping criteria as arrays (the declared options type has none of these
 * as used here).
 */
export type WhisperGenerateRequest = {
    inputs: Tensor;
    encoder_outputs: Tensor;
    decoder_input_ids: number[];
    return_timestamps: boolean;
    begin_suppress_tokens: number[] | null;
    max_new_tokens: number;
    do_sample: boolean;
    logits_processor: unknown[];
    stopping_criteria: ((ids: bigint[][]) => boolean[])[];
    streamer: {put(value: bigint[][]): void, end(): void};
    return_token_timestamps?: boolean;
    alignment_heads?: [number, number][] | null;
    num_frames?: number;
};

type GenerateOptions = Parameters<WhisperForConditionalGeneration["generate"]>[0];
type TimestampProcessorConfig = ConstructorParameters<typeof WhisperTimeStampLogitsProcessor>[0];
/** The private and loosely declared members of a transformers.js model used here. */
type ModelInternals = {
    config?: unknown;
    generation_config?: unknown;
    sessions?: Record<string, {inputNames?: unknown, outputNames?: unknown} | undefined>;
    _encode_input?(session: "model", inputs: {input_features: Tensor}, output: "last_hidden_state"): Promise<Tensor>;
    forward?(inputs: {encoder_outputs: Tensor, decoder_input_ids: Tensor}): Promise<{logits?: Tensor}>;
};

function moved(field: string): Error {
    return new Error(`@huggingface/transformers no longer has ${field} where this server reads it (src/runtimes/onnx/transformersInternals.ts): the installed version changed it.`);
}

function internals(model: PreTrainedModel): ModelInternals {
    return model as unknown as ModelInternals;
}

function record(value: unknown, field: string): Record<string, unknown> {
    if (value == null || typeof value !== "object")
        throw moved(field);
    return value as Record<string, unknown>;
}

function names(model: PreTrainedModel, session: string, list: "inputNames" | "outputNames"): string[] {
    const sessions = internals(model).sessions;
    if (sessions == null || typeof sessions !== "object")
        throw moved("PreTrainedModel.sessions");
    const found = sessions[session];
    if (found == null)
        return [];
    if (!Array.isArray(found[list]))
        throw moved(`PreTrainedModel.sessions.${session}.${list}`);
    return found[list] as string[];
}

export const transformersInternals = {
    /** `model.config`: the folder's config.json as loaded (declared as PretrainedConfig, which lists a few of its fields). */
    modelConfig(model: PreTrainedModel): Record<string, unknown> {
        return record(internals(model).config, "PreTrainedModel.config");
    },

    /** The tokens that end a generation: `model.generation_config.eos_token_id` (generation_config.json), else config.json's; one or several. */
    eosTokenIds(model: PreTrainedModel): number[] {
        const generation = internals(model).generation_config as {eos_token_id?: unknown} | null | undefined;
        const ids = [generation?.eos_token_id ?? record(internals(model).config, "PreTrainedModel.config").eos_token_id ?? []].flat();
        if (!ids.every((id) => typeof id === "number"))
            throw moved("PreTrainedModel.generation_config.eos_token_id");
        return ids as number[];
    },

    /** `model.generation_config` of a Whisper model (generation_config.json). */
    whisperGenerationConfig(model: WhisperForConditionalGeneration): WhisperGenerationConfig {
        const config = record(internals(model).generation_config, "PreTrainedModel.generation_config");
        if (typeof config.no_timestamps_token_id !== "number" || typeof config.decoder_start_token_id !== "number")
            throw moved("WhisperGenerationConfig.no_timestamps_token_id / decoder_start_token_id");
        return config as unknown as WhisperGenerationConfig;
    },

    /** `model.sessions[session].inputNames`: the inputs the ONNX file declares; none when the model has no such session. */
    sessionInputNames(model: PreTrainedModel, session: string): string[] {
        return names(model, session, "inputNames");
    },

    /** `model.sessions[session].outputNames`: the outputs the ONNX file declares; none when the model has no such session. */
    sessionOutputNames(model: PreTrainedModel, session: string): string[] {
        return names(model, session, "outputNames");
    },

    /** The tokenizer's `model_max_length` (tokenizer_config.json; declared `any`): a number, or undefined when the folder sets none. */
    tokenizerMaxLength(tokenizer: PreTrainedTokenizer): number | undefined {
        const value: unknown = tokenizer.model_max_length;
        return typeof value === "number" ? value : undefined;
    },

    /** The tokenizer's `pad_token_id` (declared a number; undefined or null when the tokenizer has no pad token). */
    tokenizerPadTokenId(tokenizer: PreTrainedTokenizer): number | null {
        const value: unknown = tokenizer.pad_token_id;
        return typeof value === "number" ? value : null;
    },

    /** Whisper's encoder alone over log-mel features (private `_encode_input`): its `last_hidden_state`. */
    async whisperEncode(model: WhisperForConditionalGeneration, features: Tensor): Promise<Tensor> {
        const encode = internals(model)._encode_input;
        if (typeof encode !== "function")
            throw moved("PreTrainedModel._encode_input");
        return encode.call(model, "model", {input_features: features}, "last_hidden_state");
    },

    /** One decoder pass over a whole prefix (`forward` with the encoder's output): the logits of every position, [1, prefix, vocabulary]. */
    async whisperDecoderLogits(model: WhisperForConditionalGeneration, encoderOutputs: Tensor, prefix: number[]): Promise<Tensor> {
        const forward = internals(model).forward;
        if (typeof forward !== "function")
            throw moved("PreTrainedModel.forward");
        const {logits} = await forward.call(model, {
            encoder_outputs: encoderOutputs, decoder_input_ids: new Tensor("int64", BigInt64Array.from(prefix.map(BigInt)), [1, prefix.length])
        });
        if (!(logits instanceof Tensor))
            throw moved("the `logits` output of PreTrainedModel.forward");
        return logits;
    },

    /** transformers.js's Whisper timestamp rules, given only the fields they read (the declared type asks for a whole WhisperGenerationConfig). */
    whisperTimestampProcessor(config: {eos_token_id: number | number[], no_timestamps_token_id: number, max_initial_timestamp_index: number | null},
        init: number[]): WhisperTimeStampLogitsProcessor {
        return new WhisperTimeStampLogitsProcessor(config as unknown as TimestampProcessorConfig, init);
    },

    /** `generate` with the options of WhisperGenerateRequest; its output has `token_timestamps` when `return_token_timestamps` was asked (the contract test checks it). */
    async whisperGenerate(model: WhisperForConditionalGeneration, request: WhisperGenerateRequest): Promise<{token_timestamps?: Tensor}> {
        return await model.generate(request as unknown as GenerateOptions) as unknown as {token_timestamps?: Tensor};
    }
};
