import { joinSamples } from "./joinSamples.js";
import { resample } from "./resample.js";

/** A file's audio as one mono channel at the rate asked for. */
export type DecodedAudioFile = {
    samples: Float32Array;
    sampleRate: number;
    /** The container the bytes were recognised as. */
    format: "wav" | "mp3" | "flac" | "ogg-opus" | "ogg-vorbis" | "webm-opus";
    /** The file's own rate and channel count, before mixing and resampling. */
    sourceSampleRate: number;
    sourceChannels: number;
};

/** Bytes no decoder here can read (unknown container, corrupt data, no audio): the message says which. */
export class UndecodableAudioError extends Error {}

/**
 * Decodes an uploaded audio file in-process, by its bytes (never its name or Content-Type): WAV by
 * hand (PCM 8/16/24/32-bit, float 32/64, WAVE_FORMAT_EXTENSIBLE), MP3 through mpg123-decoder, FLAC
 * through @wasm-audio-decoders/flac, Ogg Opus through ogg-opus-decoder (libopus), Ogg Vorbis through
 * @wasm-audio-decoders/ogg-vorbis (libvorbis), WebM/Matroska Opus
 * demuxed by mediabunny and decoded by opus-decoder (libopus): WebAssembly builds of the reference
 * decoders, MIT. Channels are averaged to mono and the result resampled to `sampleRate`.
 */
export async function decodeAudio(bytes: Uint8Array, sampleRate: number): Promise<DecodedAudioFile> {
    const decoded = await decodeChannels(bytes);
    const frames = decoded.channels[0]?.length ?? 0;
    if (decoded.channels.length === 0 || frames === 0)
        throw new UndecodableAudioError(`The ${decoded.format} file holds no audio samples.`);
    if (!(decoded.sampleRate > 0))
        throw new UndecodableAudioError(`The ${decoded.format} file declares no sample rate.`);
    const mono = mixToMono(decoded.channels);
    return {
        samples: resample(mono, decoded.sampleRate, sampleRate), sampleRate, format: decoded.format,
        sourceSampleRate: decoded.sampleRate, sourceChannels: decoded.channels.length
    };
}

type Channels = {format: DecodedAudioFile["format"], channels: Float32Array[], sampleRate: number};

const ascii = (bytes: Uint8Array, offset: number, length: number) => String.fromCharCode(...bytes.subarray(offset, offset + length));

async function decodeChannels(bytes: Uint8Array): Promise<Channels> {
    if (bytes.length >= 12 && ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WAVE")
        return decodeWav(bytes);
    if (ascii(bytes, 0, 4) === "fLaC")
        return decodeFlac(bytes);
    if (ascii(bytes, 0, 4) === "OggS") {
        if (ascii(bytes, 28, 8) === "OpusHead")
            return decodeOggOpus(bytes);
        if (ascii(bytes, 28, 7) === "\u0001vorbis")
            return decodeOggVorbis(bytes);
        throw new UndecodableAudioError("Only Ogg files with Opus or Vorbis audio are supported.");
    }
    if (ascii(bytes, 0, 3) === "ID3" || (bytes.length >= 2 && bytes[0] === 0xFF && (bytes[1] & 0xE0) === 0xE0 && (bytes[1] & 0x06) !== 0))
        return decodeMp3(bytes);
    if (bytes.length >= 8 && ascii(bytes, 4, 4) === "ftyp")
        throw new UndecodableAudioError("MP4/M4A (AAC) files are not supported: send wav, mp3, flac, ogg or webm.");
    if (bytes.length >= 4 && bytes[0] === 0x1A && bytes[1] === 0x45 && bytes[2] === 0xDF && bytes[3] === 0xA3)
        return decodeWebmOpus(bytes);
    throw new UndecodableAudioError("The file is not audio in a supported format (wav, mp3, flac, ogg opus or vorbis, webm opus).");
}

function mixToMono(channels: Float32Array[]): Float32Array {
    if (channels.length === 1)
        return channels[0];
    const mono = new Float32Array(channels[0].length);
    for (const channel of channels)
        for (let i = 0; i < mono.length; i++)
            mono[i] += channel[i] / channels.length;
    return mono;
}

type WasmDecoded = {channelData: Float32Array[], sampleRate: number, samplesDecoded: number, errors: readonly {message: string}[]};

/** Runs one of the WebAssembly decoders (wasm-audio-decoders' API) on the whole file and frees it. */
async function decodeWith<D extends {ready: Promise<void>, free(): void}>(format: Channels["format"], decoder: D, decode: (decoder: D) => WasmDecoded | Promise<WasmDecoded>): Promise<Channels> {
    await decoder.ready;
    try {
        const {channelData, sampleRate, errors, samplesDecoded} = await Promise.resolve().then(() => decode(decoder)).catch((error: Error) => {
            throw new UndecodableAudioError(`The ${format} data could not be decoded (${error.message}).`);
        });
        // A few damaged frames in a long file are skipped, as players do; a file with nothing decodable is not audio.
        if (errors.length > 0 && samplesDecoded === 0)
            throw new UndecodableAudioError(`The ${format} data could not be decoded (${errors[0].message}).`);
        return {format, channels: channelData.map((channel) => channel.subarray(0, samplesDecoded)), sampleRate};
    } finally {
        decoder.free();
    }
}

async function decodeMp3(bytes: Uint8Array): Promise<Channels> {
    const {MPEGDecoder} = await import("mpg123-decoder");
    // mpg123-decoder always hands out two channels; a mono stream has them equal, and averaging keeps it.
    return decodeWith("mp3", new MPEGDecoder(), (decoder) => decoder.decode(bytes));
}

async function decodeFlac(bytes: Uint8Array): Promise<Channels> {
    const {FLACDecoder} = await import("@wasm-audio-decoders/flac");
    return decodeWith("flac", new FLACDecoder(), (decoder) => decoder.decodeFile(bytes));
}

async function decodeOggVorbis(bytes: Uint8Array): Promise<Channels> {
    const {OggVorbisDecoder} = await import("@wasm-audio-decoders/ogg-vorbis");
    return decodeWith("ogg-vorbis", new OggVorbisDecoder(), (decoder) => decoder.decodeFile(bytes));
}

async function decodeOggOpus(bytes: Uint8Array): Promise<Channels> {
    const {OggOpusDecoder} = await import("ogg-opus-decoder");
    return decodeWith("ogg-opus", new OggOpusDecoder(), (decoder) => decoder.decodeFile(bytes));
}

/** WebM/Matroska (what browsers' MediaRecorder writes): the first audio track, which must be Opus. */
async function decodeWebmOpus(bytes: Uint8Array): Promise<Channels> {
    const {ALL_FORMATS, BufferSource, EncodedPacketSink, Input} = await import("mediabunny");
    const input = new Input({source: new BufferSource(bytes), formats: ALL_FORMATS});
    try {
        const track = await input.getPrimaryAudioTrack();
        if (track == null)
            throw new UndecodableAudioError("The WebM file has no audio track.");
        if (track.codec !== "opus")
            throw new UndecodableAudioError(`Only WebM files with Opus audio are supported (this one is ${track.codec ?? "an unknown codec"}).`);
        const channels = track.numberOfChannels;
        if (channels < 1 || channels > 2)
            throw new UndecodableAudioError(`WebM Opus with ${channels} channels is not supported (mono or stereo only).`);
        // OpusHead (the track's CodecPrivate): samples at 48 kHz to drop at the start.
        const head = (await track.getDecoderConfig())?.description;
        const headBytes = head == null ? null : ArrayBuffer.isView(head) ? new Uint8Array(head.buffer, head.byteOffset, head.byteLength) : new Uint8Array(head);
        const preSkip = headBytes != null && headBytes.length >= 12 ? headBytes[10] | headBytes[11] << 8 : 0;
        const {OpusDecoder} = await import("opus-decoder");
        const decoder = new OpusDecoder({channels, preSkip});
        await decoder.ready;
        try {
            const parts: Float32Array[][] = Array.from({length: channels}, () => []);
            for await (const packet of new EncodedPacketSink(track).packets()) {
                const {channelData, samplesDecoded} = decoder.decodeFrame(packet.data);
                channelData.slice(0, channels).forEach((channel, index) => parts[index].push(channel.subarray(0, samplesDecoded)));
            }
            return {format: "webm-opus", channels: parts.map(joinSamples), sampleRate: 48_000};
        } finally {
            decoder.free();
        }
    } catch (error) {
        throw error instanceof UndecodableAudioError ? error : new UndecodableAudioError(`The WebM data could not be read (${(error as Error).message}).`);
    } finally {
        input.dispose();
    }
}

/** RIFF/WAVE with integer PCM (8-bit unsigned, 16/24/32-bit signed) or IEEE float (32/64-bit), any channel count. */
function decodeWav(bytes: Uint8Array): Channels {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    let format: {code: number, channels: number, sampleRate: number, bits: number} | null = null;
    for (let offset = 12; offset + 8 <= bytes.length;) {
        const id = ascii(bytes, offset, 4);
        const size = view.getUint32(offset + 4, true);
        const body = offset + 8;
        if (id === "fmt " && body + 16 <= bytes.length) {
            let code = view.getUint16(body, true);
            // WAVE_FORMAT_EXTENSIBLE: the real format is the first two bytes of the sub-format GUID.
            if (code === 0xFFFE && size >= 40 && body + 26 <= bytes.length)
                code = view.getUint16(body + 24, true);
            format = {code, channels: view.getUint16(body + 2, true), sampleRate: view.getUint32(body + 4, true), bits: view.getUint16(body + 14, true)};
        } else if (id === "data") {
            if (format == null)
                throw new UndecodableAudioError("The WAV file has no fmt chunk before its data.");
            // Streamed WAVs (ours among them) declare an unknown length: the data runs to the end of the file.
            const end = size === 0xFFFFFFFF || size === 0 || body + size > bytes.length ? bytes.length : body + size;
            return {format: "wav", channels: wavSamples(view, body, end, format), sampleRate: format.sampleRate};
        }
        offset = body + size + (size % 2);
    }
    throw new UndecodableAudioError("The WAV file has no data chunk.");
}

function wavSamples(view: DataView, start: number, end: number, format: {code: number, channels: number, bits: number}): Float32Array[] {
    const {code, channels, bits} = format;
    const read = code === 1 ? intReader(view, bits) : code === 3 && (bits === 32 || bits === 64)
        ? (offset: number) => bits === 32 ? view.getFloat32(offset, true) : view.getFloat64(offset, true) : null;
    if (read == null || channels < 1)
        throw new UndecodableAudioError(`The WAV file's encoding (format ${code}, ${bits} bits, ${channels} channels) is not supported: use PCM or float samples.`);
    const frameBytes = bits / 8 * channels;
    const frames = Math.floor((end - start) / frameBytes);
    const out = Array.from({length: channels}, () => new Float32Array(frames));
    for (let frame = 0; frame < frames; frame++)
        for (let channel = 0; channel < channels; channel++)
            out[channel][frame] = read(start + frame * frameBytes + channel * bits / 8);
    return out;
}

function intReader(view: DataView, bits: number): ((offset: number) => number) | null {
    switch (bits) {
        case 8: return (offset) => (view.getUint8(offset) - 128) / 128;
        case 16: return (offset) => view.getInt16(offset, true) / 0x8000;
        case 24: return (offset) => ((view.getUint8(offset + 2) << 24 | view.getUint8(offset + 1) << 16 | view.getUint8(offset) << 8) >> 8) / 0x800000;
        case 32: return (offset) => view.getInt32(offset, true) / 0x80000000;
        default: return null;
    }
}
