import type { Context, Middleware } from "koa";
import type { RequestState } from "../../core/http/RequestState.js";
import { ChunkedBodyWriter } from "../../core/streaming/ChunkedBodyWriter.js";
import { SseWriter } from "../../core/streaming/SseWriter.js";
import { streamResponse } from "../../core/streaming/streamResponse.js";
import { compileRequestValidator } from "../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../Capability.js";
import { concatBytes } from "../../media/audio/concatBytes.js";
import { createAudioEncoder } from "../../media/audio/createAudioEncoder.js";
import { createOffThreadAudioEncoder } from "../../media/audio/OffThreadAudioEncoder.js";
import type { SpeechEngine } from "./SpeechEngine.js";
import { speechSchema } from "./speechSchema.js";
import { speechUsage } from "./speechUsage.js";
import type { SpeechAudioDeltaEvent, SpeechAudioDoneEvent, SpeechRequest } from "./SpeechWire.js";
import { synthesizeEncoded, type EncodedSpeech } from "./synthesizeEncoded.js";
import { toSpeechJob } from "./toSpeechJob.js";

/**
 * POST /v1/audio/speech: validate, resolve the model and voice, synthesize sentence by sentence
 * and answer as it goes: the audio bytes in a chunked body (`stream_format: "audio"`, the default),
 * base64 deltas as server-sent events (`"sse"`), or with `stream: false` the whole file at once.
 * The first sentence is the stream's start phase (streamResponse): a full queue or a failure on it is
 * still a plain JSON error; after the headers, errors travel in the stream.
 */
export function speechHandler(context: RouteContext): Middleware {
    const validate = compileRequestValidator<SpeechRequest>(speechSchema);

    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body);
        const {entry, engine} = await context.engines.engineFor<SpeechEngine>(request.model, "speech");
        const plan = toSpeechJob(request, engine);
        Object.assign(state.logFields, {model: entry.id, voice: plan.job.voice, format: plan.format, stream_format: plan.streamFormat, characters: request.input.length});

        // mp3, opus and flac encode in the encoder thread (off the main thread, where chat streams); wav and pcm
        // cost next to nothing, and aac runs in its own encoder's worker already.
        const createEncoder = plan.format === "mp3" || plan.format === "opus" || plan.format === "flac" ? createOffThreadAudioEncoder : createAudioEncoder;
        const encoder = await createEncoder(plan.format, {inputSampleRate: engine.sampleRate, streaming: plan.streamed});
        const speech = synthesizeEncoded(engine, plan, encoder, state.signal);
        const logUsage = ({inputTokens, audioSamples}: {inputTokens: number, audioSamples: number}) => {
            Object.assign(state.logFields, {input_tokens: inputTokens, audio_seconds: Math.round(audioSamples / engine.sampleRate * 100) / 100});
            return speechUsage(inputTokens, audioSamples, engine.sampleRate);
        };
        try {
            // The first sentence is a stream's start phase: errors until then are answered as JSON.
            const first = speech.chunks.next();
            if (!plan.streamed) {
                const whole = [await first ?? new Uint8Array(0)];
                for (let chunk; (chunk = await speech.chunks.next()) != null;)
                    whole.push(chunk);
                logUsage(await speech.done);
                ctx.type = encoder.contentType;
                ctx.body = Buffer.from(concatBytes(whole));
            } else if (plan.streamFormat === "sse") {
                await streamSse(ctx, context.ssePingMs, first, speech, logUsage);
            } else {
                await streamResponse(ctx, new ChunkedBodyWriter(ctx, encoder.contentType), {started: first, produce: async (writer) => {
                    for (let chunk = await first; chunk != null; chunk = await speech.chunks.next())
                        await writer.write(chunk);
                    logUsage(await speech.done);
                }});
            }
        } finally {
            // An aborted request is answered at once (a 503 at shutdown, nothing to a client gone); the engine's sentence
            // in progress ends the release later.
            const released = speech.release();
            if (!state.signal.aborted)
                await released;
        }
    };
}

/** OpenAI's speech events: `speech.audio.delta` per chunk, then `speech.audio.done` with the usage; no `[DONE]`. */
async function streamSse(ctx: Context, pingMs: number, first: Promise<Uint8Array | null>, speech: EncodedSpeech,
    logUsage: (result: {inputTokens: number, audioSamples: number}) => SpeechAudioDoneEvent["usage"]) {
    await streamResponse(ctx, new SseWriter(ctx, {pingMs}), {started: first, produce: async (writer) => {
        for (let chunk = await first; chunk != null; chunk = await speech.chunks.next()) {
            if (chunk.length === 0)
                continue;
            const delta: SpeechAudioDeltaEvent = {type: "speech.audio.delta", audio: Buffer.from(chunk).toString("base64")};
            writer.send(delta, delta.type);
            await writer.ready();
        }
        const done: SpeechAudioDoneEvent = {type: "speech.audio.done", usage: logUsage(await speech.done)};
        writer.send(done, done.type);
    }});
}
