import { ascii } from "./decode/ascii.js";
import { AudioClock } from "./decode/AudioClock.js";
import { AudioTooLongError, checkSampleRate, UndecodableAudioError } from "./decode/audioRefusals.js";
import type { AudioContainer, AudioStream } from "./decode/AudioStream.js";
import { MonoCollector } from "./decode/MonoCollector.js";
import { openFlac } from "./decode/openFlac.js";
import { openMp3 } from "./decode/openMp3.js";
import { openOgg } from "./decode/openOgg.js";
import { openWav } from "./decode/openWav.js";
import { openWebmOpus } from "./decode/openWebmOpus.js";

/** A file's audio as one mono channel at the rate asked for. */
export type DecodedAudioFile = {
    samples: Float32Array;
    sampleRate: number;
    /** The container the bytes were recognised as. */
    format: AudioContainer;
    /** The file's own rate and channel count, before mixing and resampling. */
    sourceSampleRate: number;
    sourceChannels: number;
};

/** What one decode may take. */
export type DecodeLimits = {
    /** The longest audio accepted, in seconds: past it, AudioTooLongError (before decoding when the header tells the length). */
    maxSeconds: number;
    /** Called between pieces of the file; throws to stop decoding (a cancelled request). */
    checkpoint?: () => void;
};

/**
 * Decodes an uploaded audio file in-process, by its bytes (never its name or Content-Type): WAV by hand
 * (PCM 8/16/24/32-bit, float 32/64, WAVE_FORMAT_EXTENSIBLE), MP3 through mpg123-decoder, FLAC through
 * @wasm-audio-decoders/flac, Ogg Opus through ogg-opus-decoder (libopus), Ogg Vorbis through
 * @wasm-audio-decoders/ogg-vorbis (libvorbis), WebM/Matroska Opus demuxed by mediabunny and decoded by
 * opus-decoder (libopus): WebAssembly builds of the reference decoders, MIT. Channels are averaged to mono
 * and the result resampled to `sampleRate`.
 *
 * Bounded, so that a small upload cannot decode to hours: what the header declares is checked first (a rate
 * outside 8-384 kHz: SampleRateError; a length past `limits.maxSeconds`: AudioTooLongError). The file is
 * decoded a bounded piece at a time, each piece's rate and length checked before it is kept, with
 * `limits.checkpoint` between pieces. Unless the header gives the exact length, the file is first decoded
 * only to count (nothing kept): one that decodes past the limit (silence, a header that hides or understates
 * its length) is refused having held one piece at a time. Then it is decoded again, keeping at most the
 * limit's worth of output samples; a refusal or a cancellation frees the decoder and drops what was decoded.
 */
export async function decodeAudio(bytes: Uint8Array, sampleRate: number, limits: DecodeLimits): Promise<DecodedAudioFile> {
    let stream = await openAudio(bytes);
    if (stream.sampleRate != null)
        checkSampleRate(stream.sampleRate, stream.format);
    if (stream.seconds != null && stream.seconds > limits.maxSeconds)
        throw new AudioTooLongError(limits.maxSeconds, stream.seconds);
    if (!stream.exact) {
        const clock = new AudioClock(stream.format, limits.maxSeconds);
        for await (const chunk of stream.chunks) {
            limits.checkpoint?.();
            clock.count(chunk);
        }
        stream = await openAudio(bytes);
    }
    const collector = new MonoCollector(stream.format, sampleRate, limits.maxSeconds);
    let error: string | undefined;
    for await (const chunk of stream.chunks) {
        limits.checkpoint?.();
        error ??= chunk.error;
        collector.push(chunk);
    }
    // A few damaged frames in a long file are skipped, as players do; a file with nothing decodable is not audio.
    const {source} = collector.clock;
    if (source == null)
        throw new UndecodableAudioError(error != null ? `The ${stream.format} data could not be decoded (${error}).` : `The ${stream.format} file holds no audio samples.`);
    return {samples: collector.finish(), sampleRate, format: stream.format, sourceSampleRate: source.sampleRate, sourceChannels: source.channels};
}

/** The container, by its first bytes. */
async function openAudio(bytes: Uint8Array): Promise<AudioStream> {
    if (bytes.length >= 12 && ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WAVE")
        return openWav(bytes);
    if (ascii(bytes, 0, 4) === "fLaC")
        return openFlac(bytes);
    if (ascii(bytes, 0, 4) === "OggS") {
        if (ascii(bytes, 28, 8) === "OpusHead")
            return openOgg(bytes, "opus");
        if (ascii(bytes, 28, 7) === "\u0001vorbis")
            return openOgg(bytes, "vorbis");
        throw new UndecodableAudioError("Only Ogg files with Opus or Vorbis audio are supported.");
    }
    if (ascii(bytes, 0, 3) === "ID3" || (bytes.length >= 2 && bytes[0] === 0xFF && (bytes[1] & 0xE0) === 0xE0 && (bytes[1] & 0x06) !== 0))
        return openMp3(bytes);
    if (bytes.length >= 8 && ascii(bytes, 4, 4) === "ftyp")
        throw new UndecodableAudioError("MP4/M4A (AAC) files are not supported: send wav, mp3, flac, ogg or webm.");
    if (bytes.length >= 4 && bytes[0] === 0x1A && bytes[1] === 0x45 && bytes[2] === 0xDF && bytes[3] === 0xA3)
        return openWebmOpus(bytes);
    throw new UndecodableAudioError("The file is not audio in a supported format (wav, mp3, flac, ogg opus or vorbis, webm opus).");
}
