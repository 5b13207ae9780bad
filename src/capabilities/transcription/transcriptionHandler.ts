import type { Middleware } from "koa";
import { ApiError } from "../../core/http/ApiError.js";
import type { RequestState } from "../../core/http/RequestState.js";
import { SseWriter } from "../../core/streaming/SseWriter.js";
import { streamResponse } from "../../core/streaming/streamResponse.js";
import type { RouteContext } from "../Capability.js";
import { formatTranscript, wireLogprobs } from "./formatTranscript.js";
import { AsyncQueue } from "../../core/streaming/AsyncQueue.js";
import type { TranscriptionEngine, TranscriptionResult, TranscriptSegment } from "./TranscriptionEngine.js";
import type { TranscriptionRequest, TranscriptTextDeltaEvent, TranscriptTextDoneEvent } from "./TranscriptionWire.js";
import { toTranscriptionRequest } from "./toTranscriptionRequest.js";

/** Whisper's encoder positions per second of audio (1500 per 30 s window): the `input_tokens` of a streamed answer's usage. */
const audioTokensPerSecond = 50;

/**
 * POST /v1/audio/transcriptions (`task` transcribe) and /v1/audio/translations (translate): check the
 * form, decode and transcribe in the worker pool, answer in the `response_format`; with `stream: true`,
 * OpenAI's `transcript.text.delta` events (one per segment, as each 30 s window is done) and a
 * `transcript.text.done` with the whole text and the usage. The first window's segments (or the end) are
 * the stream's start phase (streamResponse), so an undecodable file or a full queue is still a plain JSON error.
 */
export function transcriptionHandler(context: RouteContext, task: "transcribe" | "translate"): Middleware {
    return async (ctx) => {
        const state = ctx.state as RequestState;
        const {request, file} = toTranscriptionRequest(ctx.request.body as Record<string, string | string[]>, state.files ?? [], task);
        const {entry, engine} = await context.engines.engineFor<TranscriptionEngine>(request.model, "transcription");
        checkModel(request, engine);
        Object.assign(state.logFields, {model: entry.id, task, response_format: request.responseFormat, stream: request.stream, file_bytes: file.size});
        const job = {
            file: file.parts, task: request.task, language: request.language, prompt: request.prompt, temperature: request.temperature,
            logprobs: request.logprobs, wordTimestamps: request.granularities.word
        };
        const logUsage = (result: TranscriptionResult) => Object.assign(state.logFields, {audio_seconds: result.seconds, completion_tokens: result.outputTokens});

        if (!request.stream) {
            const result = await engine.transcribe(job, {signal: state.signal});
            logUsage(result);
            const {type, body} = formatTranscript({...result, task}, request.responseFormat, request);
            ctx.type = type;
            ctx.body = body;
            return;
        }
        const queue = new AsyncQueue<TranscriptSegment[]>();
        const done = engine.transcribe(job, {signal: state.signal, onSegments: (segments) => queue.push(segments)});
        done.then(() => queue.end(), (error: unknown) => queue.fail(error));
        // The first window (or the end) is the stream's start phase: errors until then are answered as JSON.
        const first = queue.next();
        await streamResponse(ctx, new SseWriter(ctx, {pingMs: context.ssePingMs}), {started: first, produce: async (writer) => {
            for (let batch = await first; batch != null; batch = await queue.next()) {
                for (const segment of batch) {
                    const delta: TranscriptTextDeltaEvent = {
                        type: "transcript.text.delta", delta: segment.text, segment_id: `seg_${segment.id}`,
                        ...(request.logprobs ? {logprobs: wireLogprobs([segment])} : {})
                    };
                    writer.send(delta, delta.type);
                }
                await writer.ready();
            }
            const result = await done;
            logUsage(result);
            const audioTokens = Math.round(result.seconds * audioTokensPerSecond);
            const event: TranscriptTextDoneEvent = {
                type: "transcript.text.done", text: result.text.trim(),
                ...(request.logprobs ? {logprobs: wireLogprobs(result.segments)} : {}),
                usage: {
                    type: "tokens", input_tokens: audioTokens, output_tokens: result.outputTokens, total_tokens: audioTokens + result.outputTokens,
                    input_token_details: {audio_tokens: audioTokens, text_tokens: 0}
                }
            };
            writer.send(event, event.type);
        }});
    };
}

/** What the request asks of the model that it cannot do: a 400 naming the field. */
function checkModel(request: TranscriptionRequest, engine: TranscriptionEngine) {
    if (request.granularities.word && !engine.wordTimestamps)
        throw ApiError.invalidRequest(`Model '${engine.id}' cannot time words: its decoder was exported without cross-attentions or its generation_config.json names no alignment_heads (use a *_timestamped ONNX export, such as onnx-community/whisper-base_timestamped).`, "timestamp_granularities");
    if (!engine.multilingual) {
        if (request.task === "translate")
            throw ApiError.invalidRequest(`Model '${engine.id}' is English-only and cannot translate: use a multilingual Whisper model.`, "model");
        if (request.language != null && request.language !== "en")
            throw ApiError.invalidRequest(`Model '${engine.id}' is English-only: 'language' can only be 'en'.`, "language");
        return;
    }
    if (request.language != null && !engine.languages.includes(request.language))
        throw ApiError.invalidRequest(`Model '${engine.id}' does not know language '${request.language}'. Known: ${engine.languages.join(", ")}.`, "language");
}
