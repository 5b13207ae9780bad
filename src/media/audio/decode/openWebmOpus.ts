import type { InputAudioTrack } from "mediabunny";
import { joinSamples } from "../joinSamples.js";
import { UndecodableAudioError } from "./audioRefusals.js";
import type { AudioChunk, AudioStream } from "./AudioStream.js";

/** Frames of decoded packets (20-120 ms each) gathered into one piece. */
const pieceFrames = 2 ** 16;

/**
 * WebM/Matroska (what browsers' MediaRecorder writes): the first audio track, which must be Opus, demuxed by
 * mediabunny and decoded by opus-decoder (libopus) packet by packet. The Segment's Duration, when the muxer
 * wrote one (MediaRecorder does not), tells the length up front.
 */
export async function openWebmOpus(bytes: Uint8Array): Promise<AudioStream> {
    const {ALL_FORMATS, BufferSource, EncodedPacketSink, Input} = await import("mediabunny");
    const open = () => new Input({source: new BufferSource(bytes), formats: ALL_FORMATS});
    const probe = open();
    let seconds: number | null;
    try {
        seconds = await (await opusTrack(probe)).getDurationFromMetadata();
    } catch (error) {
        throw readError(error);
    } finally {
        probe.dispose();
    }
    async function* chunks(): AsyncGenerator<AudioChunk> {
        const input = open();
        let decoder: {free(): void} | null = null;
        try {
            const track = await opusTrack(input);
            const channels = track.numberOfChannels;
            // OpusHead (the track's CodecPrivate): samples at 48 kHz to drop at the start.
            const head = (await track.getDecoderConfig())?.description;
            const headBytes = head == null ? null : ArrayBuffer.isView(head) ? new Uint8Array(head.buffer, head.byteOffset, head.byteLength) : new Uint8Array(head);
            const preSkip = headBytes != null && headBytes.length >= 12 ? headBytes[10] | headBytes[11] << 8 : 0;
            const {OpusDecoder} = await import("opus-decoder");
            const opus = new OpusDecoder({channels, preSkip});
            decoder = opus;
            await opus.ready;
            let parts: Float32Array[][] = Array.from({length: channels}, () => []);
            let frames = 0;
            let error: string | undefined;
            const piece = (): AudioChunk => {
                const chunk = {channels: parts.map(joinSamples), sampleRate: 48_000, error};
                parts = Array.from({length: channels}, () => []);
                frames = 0;
                error = undefined;
                return chunk;
            };
            for await (const packet of new EncodedPacketSink(track).packets()) {
                const {channelData, samplesDecoded, errors} = opus.decodeFrame(packet.data);
                channelData.slice(0, channels).forEach((channel, index) => parts[index].push(channel.subarray(0, samplesDecoded)));
                frames += samplesDecoded;
                error ??= errors[0]?.message;
                if (frames >= pieceFrames)
                    yield piece();
            }
            yield piece();
        } catch (caught) {
            throw readError(caught);
        } finally {
            decoder?.free();
            input.dispose();
        }
    }
    return {format: "webm-opus", sampleRate: 48_000, seconds, exact: false, chunks: chunks()};
}

async function opusTrack(input: {getPrimaryAudioTrack(): Promise<InputAudioTrack | null>}): Promise<InputAudioTrack> {
    const track = await input.getPrimaryAudioTrack();
    if (track == null)
        throw new UndecodableAudioError("The WebM file has no audio track.");
    if (track.codec !== "opus")
        throw new UndecodableAudioError(`Only WebM files with Opus audio are supported (this one is ${track.codec ?? "an unknown codec"}).`);
    if (track.numberOfChannels < 1 || track.numberOfChannels > 2)
        throw new UndecodableAudioError(`WebM Opus with ${track.numberOfChannels} channels is not supported (mono or stereo only).`);
    return track;
}

function readError(error: unknown) {
    return error instanceof UndecodableAudioError ? error : new UndecodableAudioError(`The WebM data could not be read (${(error as Error).message}).`);
}
