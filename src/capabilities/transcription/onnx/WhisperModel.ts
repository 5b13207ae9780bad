import { deflateSync } from "node:zlib";
import {
    AutoProcessor, AutoTokenizer, SuppressTokensAtBeginLogitsProcessor, WhisperForConditionalGeneration, type PreTrainedTokenizer, type Processor, type Tensor
} from "@huggingface/transformers";
import type { TaskContext } from "../../../core/workers/WorkerTask.js";
import { sessionOptions } from "../../../runtimes/onnx/sessionOptions.js";
import { transformersInternals, type WhisperGenerationConfig } from "../../../runtimes/onnx/transformersInternals.js";
import { byteLevelBytes } from "./byteLevelBytes.js";
import { logSumExp } from "../../../runtimes/onnx/logSumExp.js";
import { seededSampler } from "../../../runtimes/onnx/seededSampler.js";
import { temperatureFallback, type WindowQuality } from "./temperatureFallback.js";
import { timedWords } from "./timedWords.js";
import { timestampRules } from "./timestampRules.js";
import { tokenStartTimes } from "./tokenStartTimes.js";
import type { TokenLogprob, TranscriptionResult, TranscriptSegment } from "../TranscriptionEngine.js";
import type { TranscribeTask, WhisperModelDescription, WhisperModelSpec, WindowProgress } from "./transcriptionWorkerProtocol.js";

/** Whisper's input: 16 kHz, 30 s windows, timestamps in steps of 20 ms, `seek` in 10 ms mel frames. */
export const whisperSampleRate = 16_000;
const windowSamples = 30 * whisperSampleRate;
const timePrecision = 0.02;
const framesPerSecond = 100;
/** Audio samples per encoder position (two 10 ms mel frames). */
const samplesPerEncoderFrame = 320;
/** A window that ends inside a segment is resumed from the last complete one, unless that would advance less than this. */
const minimumAdvanceSeconds = 1;


/** One decode of a window: its tokens (up to `<|endoftext|>`), their log-probabilities and, when asked, when each starts (tokenStartTimes). */
type WindowDecode = {tokens: number[], logprobs: number[], sumLogprob: number, times: number[] | null};
/** A window's audio as the decoder reads it: the log-mel features and the encoder's output (computed once for every decode of the window). */
type EncodedWindow = {features: Tensor, hidden: Tensor};

/**
 * A Whisper model (encoder + merged decoder ONNX, transformers.js `WhisperForConditionalGeneration`)
 * and OpenAI's long-form algorithm around it: the audio in 30 s windows, each decoded with timestamp
 * tokens; a window that ends inside a segment is resumed from the end of its last complete segment
 * (so windows overlap and no words are cut), else the next window starts where this one ended. Each
 * window's segments go to the main thread as soon as it is done; cancellation is checked between
 * decoder steps (the generation stops there; ONNX Runtime is never interrupted mid-run).
 */
export class WhisperModel {
    private constructor(readonly description: WhisperModelDescription, private readonly model: WhisperForConditionalGeneration,
        private readonly processor: Processor, private readonly tokenizer: PreTrainedTokenizer, private readonly generation: WhisperGenerationConfig,
        private readonly special: {startOfPrev: number | null, noSpeech: number | null, timestampBegin: number, endOfText: number, contextTokens: number},
        /** Vocabulary entries by id (the byte-level text each token stands for). */
        private readonly entries: string[]) {}

    static async load(spec: WhisperModelSpec): Promise<WhisperModel> {
        const tokenizer = await AutoTokenizer.from_pretrained(spec.folder, {local_files_only: true});
        const processor = await AutoProcessor.from_pretrained(spec.folder, {local_files_only: true});
        const model = await WhisperForConditionalGeneration.from_pretrained(spec.folder, {
            local_files_only: true, device: "cpu", dtype: spec.dtype as "fp32", session_options: sessionOptions(spec.threads)
        }) as WhisperForConditionalGeneration;
        const generation = transformersInternals.whisperGenerationConfig(model);
        const config = transformersInternals.modelConfig(model) as {max_target_positions?: number};
        const vocabulary = tokenizer.get_vocab();
        const id = (token: string) => vocabulary.get(token) ?? null;
        const eos = Array.isArray(generation.eos_token_id) ? generation.eos_token_id[0] : generation.eos_token_id;
        const languages = Object.keys(generation.lang_to_id ?? {}).map((token) => token.replace(/^<\|(.*)\|>$/u, "$1"));
        const decoderOutputs = transformersInternals.sessionOutputNames(model, "decoder_model_merged");
        const description: WhisperModelDescription = {
            multilingual: generation.is_multilingual === true,
            languages,
            maxWindowTokens: Math.floor((config.max_target_positions ?? 448) / 2),
            wordTimestamps: (generation.alignment_heads?.length ?? 0) > 0 && decoderOutputs.some((name) => name.startsWith("cross_attentions"))
        };
        const entries: string[] = [];
        for (const [token, tokenId] of vocabulary)
            entries[tokenId] = token;
        return new WhisperModel(description, model, processor, tokenizer, generation, {
            startOfPrev: id("<|startofprev|>"), noSpeech: id("<|nospeech|>") ?? id("<|nocaptions|>"),
            timestampBegin: generation.no_timestamps_token_id + 1, endOfText: eos, contextTokens: config.max_target_positions ?? 448
        }, entries);
    }

    /** Transcribes (or translates) `samples`, mono at 16 kHz, as `task` asks. */
    async transcribe(samples: Float32Array, task: TranscribeTask, context: TaskContext<WindowProgress>): Promise<TranscriptionResult> {
        const totalSeconds = samples.length / whisperSampleRate;
        const segments: TranscriptSegment[] = [];
        // Without a language, a multilingual model detects it from the first window, as Whisper does.
        let language = task.language ?? (this.description.multilingual ? null : "en");
        // What each window is prompted with (`<|startofprev|>`): the request's prompt, then, as OpenAI's Whisper
        // does (condition_on_previous_text), the text of the windows before it, until a window needed a
        // temperature above 0.5 (its text may be a loop; the next windows start afresh).
        let previous = task.prompt != null && task.prompt.trim() !== "" ? this.tokenizer.encode(` ${task.prompt.trim()}`, {add_special_tokens: false}) : [];
        let outputTokens = 0;
        for (let seek = 0; seek < samples.length;) {
            context.throwIfCancelled();
            const window = samples.subarray(seek, Math.min(samples.length, seek + windowSamples));
            const encoded = await this.encode(window);
            language ??= await this.detectLanguage(encoded);
            const sequence = this.sequenceTokens(task, language);
            const init = this.special.startOfPrev != null && previous.length > 0
                ? [this.special.startOfPrev, ...previous.slice(-(this.description.maxWindowTokens - 1)), ...sequence] : sequence;
            const {decoded, temperature, silence, noSpeechProb} = await this.decodeWithFallback(encoded, window.length, seek, init, task, context);
            context.throwIfCancelled();
            outputTokens += decoded.tokens.length;
            const windowSeconds = window.length / whisperSampleRate;
            const {complete, partial, lastEnd} = toSegments(decoded.tokens, decoded.logprobs, this.special.timestampBegin, windowSeconds);
            // Ended inside a segment: resume at the end of the last complete one (the rest is decoded again).
            const resume = !silence && partial != null && lastEnd != null && lastEnd >= minimumAdvanceSeconds && seek + window.length < samples.length;
            const kept = silence ? [] : resume ? complete : partial != null ? [...complete, partial] : complete;
            const offset = seek / whisperSampleRate;
            const added: TranscriptSegment[] = [];
            for (const raw of kept) {
                const textIndices = raw.indices.filter((index) => decoded.tokens[index] < this.special.endOfText);
                const textTokens = textIndices.map((index) => decoded.tokens[index]);
                const text = textTokens.length === 0 ? "" : this.tokenizer.decode(textTokens, {skip_special_tokens: true});
                if (text.trim() === "")
                    continue;
                const start = round(offset + raw.start);
                const end = round(offset + Math.max(raw.start, raw.end));
                const segment: TranscriptSegment = {
                    id: segments.length, seek: Math.round(offset * framesPerSecond), start, end, text,
                    tokens: raw.tokens, avgLogprob: raw.logprobs.length === 0 ? 0 : raw.logprobs.reduce((a, b) => a + b, 0) / raw.logprobs.length,
                    compressionRatio: compressionRatio(text), noSpeechProb, temperature,
                    ...(task.wordTimestamps && decoded.times != null ? {
                        words: timedWords(textTokens, textIndices.map((index) => round(offset + decoded.times![index])),
                            round(offset + (decoded.times[raw.next] ?? decoded.times.at(-1) ?? 0)),
                            (tokens) => this.tokenizer.decode(tokens, {skip_special_tokens: true}), {start, end, language})
                    } : {}),
                    ...(task.logprobs ? {logprobs: textIndices.map((index) => this.tokenLogprob(decoded.tokens[index], decoded.logprobs[index]))} : {})
                };
                segments.push(segment);
                added.push(segment);
            }
            if (!task.conditionOnPreviousText || temperature > 0.5)
                previous = [];
            else
                previous = [...previous, ...added.flatMap((segment) => segment.tokens.filter((token) => token < this.special.endOfText))];
            seek += resume ? Math.round(lastEnd * whisperSampleRate) : window.length;
            context.progress({segments: added, processedSeconds: round(Math.min(seek, samples.length) / whisperSampleRate), totalSeconds: round(totalSeconds)});
        }
        return {segments, text: segments.map((segment) => segment.text).join(""), seconds: round(totalSeconds), outputTokens, language: language ?? "en"};
    }

    /**
     * A window decoded at each temperature of the fallback schedule until one passes Whisper's checks (or is
     * silence); when none does, the best of the attempts. All attempts read the same encoder output.
     */
    private async decodeWithFallback(encoded: EncodedWindow, windowLength: number, seek: number, init: number[], task: TranscribeTask,
        context: TaskContext<WindowProgress>) {
        const noSpeechProb = await this.noSpeechProbability(encoded, init);
        const frames = Math.ceil(windowLength / samplesPerEncoderFrame);
        const attempts: {decoded: WindowDecode, temperature: number, quality: WindowQuality}[] = [];
        for (const [attempt, temperature] of temperatureFallback.schedule(task.temperature, task.temperatureFallback).entries()) {
            context.throwIfCancelled();
            // The same window and attempt always draw the same numbers: the same request gives the same text.
            const seed = (Math.imul(seek, 31) + attempt * 7919) >>> 0;
            const decoded = await this.decodeWindow(encoded, init, temperature, seed, task.wordTimestamps ? frames : null, context);
            const quality = this.quality(decoded, noSpeechProb);
            const verdict = temperatureFallback.judge(quality);
            if (verdict !== "retry" || context.cancelled)
                return {decoded, temperature, silence: verdict === "silence", noSpeechProb};
            attempts.push({decoded, temperature, quality});
        }
        return {...temperatureFallback.best(attempts), silence: false, noSpeechProb};
    }

    /** A decode's whole text and tokens as the fallback judges them (OpenAI's average counts `<|endoftext|>` as one more token). */
    private quality(decoded: WindowDecode, noSpeechProb: number): WindowQuality {
        const text = decoded.tokens.filter((token) => token < this.special.endOfText);
        return {
            compressionRatio: compressionRatio(text.length === 0 ? "" : this.tokenizer.decode(text, {skip_special_tokens: true})),
            avgLogprob: decoded.sumLogprob / (decoded.tokens.length + 1),
            noSpeechProb
        };
    }

    /** The window's log-mel features and the encoder's output, once for everything read from the window. */
    private async encode(window: Float32Array): Promise<EncodedWindow> {
        const {input_features} = await this.processor(window) as {input_features: Tensor};
        const hidden = await transformersInternals.whisperEncode(this.model, input_features);
        return {features: input_features, hidden};
    }

    /**
     * OpenAI's no-speech probability: `<|nospeech|>` (`<|nocaptions|>`) in the model's raw distribution at the
     * `<|startoftranscript|>` position (where it would otherwise predict the language), read from one decoder pass
     * over the prompt up to that token. Not from the generation's own scores: Whisper's configs list the token in
     * `suppress_tokens`, which transformers.js applies before any logits processor of ours.
     */
    private async noSpeechProbability(encoded: EncodedWindow, init: number[]): Promise<number> {
        const noSpeech = this.special.noSpeech;
        const start = init.indexOf(this.generation.decoder_start_token_id);
        if (noSpeech == null || start < 0)
            return 0;
        const scores = await this.nextTokenScores(encoded, init.slice(0, start + 1));
        return noSpeech < scores.length ? Math.exp(scores[noSpeech]) : 0;
    }

    /** The model's raw log-probabilities of the token after `prefix` (one decoder pass, no logits processor). */
    private async nextTokenScores(encoded: EncodedWindow, prefix: number[]): Promise<Float32Array> {
        const logits = await transformersInternals.whisperDecoderLogits(this.model, encoded.hidden, prefix);
        const vocabulary = logits.dims.at(-1)!;
        return logSoftmax((logits.data as Float32Array).subarray((prefix.length - 1) * vocabulary, prefix.length * vocabulary));
    }

    private tokenLogprob(token: number, logprob: number): TokenLogprob {
        return {token: this.tokenizer.decode([token]), bytes: byteLevelBytes(this.entries[token] ?? ""), logprob};
    }

    /**
     * Whisper's language detection: the model's distribution after `<|startoftranscript|>` on the (first)
     * window, and the most likely of its language tokens.
     */
    private async detectLanguage(encoded: EncodedWindow): Promise<string> {
        const scores = await this.nextTokenScores(encoded, [this.generation.decoder_start_token_id]);
        let detected: string | null = null;
        let best = -Infinity;
        for (const [token, id] of Object.entries(this.generation.lang_to_id ?? {}))
            if (scores[id] > best) {
                best = scores[id];
                detected = token;
            }
        if (detected == null)
            throw new Error("The Whisper model has no language tokens to detect a language with.");
        return detected.replace(/^<\|(.*)\|>$/u, "$1");
    }

    /** `<|startoftranscript|>`, then language and task on a multilingual model (what follows a window's prompt). */
    private sequenceTokens(task: TranscribeTask, language: string): number[] {
        const {generation} = this;
        const tokens = [generation.decoder_start_token_id];
        if (this.description.multilingual) {
            const languageToken = generation.lang_to_id?.[`<|${language}|>`];
            const taskToken = generation.task_to_id?.[task.task];
            if (languageToken == null || taskToken == null)
                throw new Error(`The Whisper model has no token for language '${language}' or task '${task.task}'.`);
            tokens.push(languageToken, taskToken);
        }
        return tokens;
    }

    /**
     * One generation over a window: greedy at temperature 0, else drawn by a seeded sampler. The logits
     * processors are built here, in order: Whisper's timestamp rules (the two transformers.js lacks, then its own),
     * the suppressed first tokens, the recorder of each chosen token's log-probability (after the rules, as
     * OpenAI's decoder counts it), then the sampler; transformers.js adds none of its own after them (its
     * `suppress_tokens` run first). With `wordFrames`, the cross-attentions give each token a time (DTW over
     * the first `wordFrames` encoder positions, the audio's part of the window).
     */
    private async decodeWindow(encoded: EncodedWindow, init: number[], temperature: number, seed: number, wordFrames: number | null,
        context: TaskContext<WindowProgress>): Promise<Omit<WindowDecode, "noSpeechProb">> {
        const logprobs: number[] = [];
        let pending: Float32Array | null = null;
        // The chosen token's log-probability is read at the next step or at the end, once the sampler has picked it.
        const record = (_ids: bigint[][], logits: Tensor) => {
            pending = logSoftmax((logits.data as Float32Array).subarray(0, logits.dims.at(-1)));
            return logits;
        };
        const generated: number[] = [];
        const streamer = {
            put(value: bigint[][]) {
                // The first call is the prompt; later ones are one chosen token each.
                if (pending == null)
                    return;
                const token = Number(value[0][0]);
                generated.push(token);
                logprobs.push(pending[token]);
                pending = null;
            },
            end() {}
        };
        const stop = (ids: bigint[][]) => ids.map(() => context.cancelled);
        const {generation} = this;
        const processors = [
            // Before transformers.js's rules, as in OpenAI's ApplyTimestampRules: its "a timestamp is likelier than any
            // text" check must see the timestamps these rules forbid.
            timestampRules(this.special.timestampBegin, init.length, generation.max_initial_timestamp_index ?? null),
            transformersInternals.whisperTimestampProcessor({
                eos_token_id: generation.eos_token_id, no_timestamps_token_id: generation.no_timestamps_token_id, max_initial_timestamp_index: null
            }, init),
            ...(generation.begin_suppress_tokens != null ? [new SuppressTokensAtBeginLogitsProcessor(generation.begin_suppress_tokens, init.length)] : []),
            record,
            ...(temperature > 0 ? [seededSampler(temperature, seed)] : [])
        ];
        const output = await transformersInternals.whisperGenerate(this.model, {
            inputs: encoded.features,
            encoder_outputs: encoded.hidden,
            decoder_input_ids: init,
            // Timestamp rules and suppressed first tokens are in `processors`: transformers.js must not add them again after the sampler.
            return_timestamps: false,
            begin_suppress_tokens: null,
            // Half the decoder's context (Whisper's sample_len), and never past its end after a long prompt.
            max_new_tokens: Math.min(this.description.maxWindowTokens, this.special.contextTokens - init.length),
            do_sample: false,
            logits_processor: processors,
            stopping_criteria: [stop],
            streamer,
            ...(wordFrames != null ? {return_token_timestamps: true, alignment_heads: generation.alignment_heads, num_frames: wordFrames} : {})
        });
        const end = generated.indexOf(this.special.endOfText);
        const tokens = end >= 0 ? generated.slice(0, end) : generated;
        const sumLogprob = logprobs.slice(0, tokens.length + 1).reduce((a, b) => a + b, 0);
        const times = wordFrames != null && output.token_timestamps != null
            ? tokenStartTimes((output.token_timestamps.tolist() as number[][])[0], init.length) : null;
        return {tokens, logprobs: logprobs.slice(0, tokens.length), sumLogprob, times};
    }

    async dispose(): Promise<void> {
        await this.model.dispose();
    }
}

/** `indices`: where its text tokens are in the window's tokens; `next`: the index after them (its closing timestamp, or the end). */
type RawSegment = {start: number, end: number, tokens: number[], logprobs: number[], indices: number[], next: number};

/**
 * A window's tokens as segments: `<|t0|> text <|t1|>` pairs (times relative to the window). A text
 * run with no closing timestamp is `partial` (it ends at the window's end); `lastEnd` is the end of
 * the last complete segment.
 */
export function toSegments(tokens: number[], logprobs: number[], timestampBegin: number, windowSeconds: number) {
    const complete: RawSegment[] = [];
    let start: number | null = null;
    let text: number[] = [];
    let indices: number[] = [];
    let scores: number[] = [];
    let lastEnd: number | null = null;
    // Times never go back (a model may emit a smaller timestamp after a larger one).
    let latest = 0;
    tokens.forEach((token, index) => {
        if (token >= timestampBegin) {
            const time = Math.max(latest, Math.min(windowSeconds, (token - timestampBegin) * timePrecision));
            latest = time;
            if (text.length > 0) {
                complete.push({start: start ?? 0, end: time, tokens: text, logprobs: [...scores, logprobs[index]], indices, next: index});
                lastEnd = time;
                start = null;
                text = [];
                indices = [];
                scores = [];
            } else {
                start = time;
                scores = [logprobs[index]];
            }
            return;
        }
        text.push(token);
        indices.push(index);
        scores.push(logprobs[index]);
    });
    const partial: RawSegment | null = text.length > 0
        ? {start: Math.min(start ?? lastEnd ?? 0, windowSeconds), end: windowSeconds, tokens: text, logprobs: scores, indices, next: tokens.length} : null;
    return {complete, partial, lastEnd: lastEnd as number | null};
}

function logSoftmax(logits: Float32Array): Float32Array {
    const log = logSumExp(logits);
    return logits.map((value) => value - log);
}

/** Text bytes over their zlib-compressed bytes, as OpenAI's Whisper reports it (high = repetitive). */
function compressionRatio(text: string): number {
    const bytes = Buffer.from(text, "utf8");
    return bytes.length === 0 ? 0 : round(bytes.length / deflateSync(bytes).length);
}

const round = (value: number) => Math.round(value * 1000) / 1000;
