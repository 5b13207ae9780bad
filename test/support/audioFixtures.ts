import { createAudioEncoder } from "../../src/media/audio/createAudioEncoder.js";
import type { AudioFormat } from "../../src/media/audio/audioFormats.js";
import { concatBytes } from "../../src/media/audio/concatBytes.js";
import { seededRandom } from "./seededRandom.js";

/** `seconds` of a speech-like test signal: two tones gliding, amplitude-modulated like syllables, a little noise. */
export function testSignal(seconds: number, sampleRate: number, seed = 5): Float32Array {
    const random = seededRandom(seed);
    return Float32Array.from({length: Math.round(seconds * sampleRate)}, (_, index) => {
        const time = index / sampleRate;
        const envelope = 0.5 + 0.5 * Math.sin(2 * Math.PI * 3 * time);
        const voice = Math.sin(2 * Math.PI * (180 + 40 * Math.sin(time)) * time) + 0.5 * Math.sin(2 * Math.PI * 900 * time);
        return 0.3 * envelope * voice + 0.02 * (random() * 2 - 1);
    });
}

/** The signal encoded by the server's own encoders (the same ones /v1/audio/speech answers with): a whole file. */
export async function encodeFixture(format: AudioFormat, samples: Float32Array, sampleRate: number): Promise<Uint8Array> {
    const encoder = await createAudioEncoder(format, {inputSampleRate: sampleRate, streaming: false});
    const head = await encoder.push(samples);
    return concatBytes([head, await encoder.end()]);
}

/**
 * An Ogg Opus file's packets moved into a WebM container (what browsers' MediaRecorder writes), by mediabunny.
 * `appendOnly`: written as a live stream, without the Segment's Duration (as MediaRecorder's files are).
 */
export async function remuxOggToWebm(ogg: Uint8Array, {appendOnly = false} = {}): Promise<Uint8Array> {
    const {ALL_FORMATS, BufferSource, BufferTarget, EncodedAudioPacketSource, EncodedPacketSink, Input, Output, WebMOutputFormat} = await import("mediabunny");
    const input = new Input({source: new BufferSource(ogg), formats: ALL_FORMATS});
    const track = (await input.getPrimaryAudioTrack())!;
    const decoderConfig = (await track.getDecoderConfig())!;
    const target = new BufferTarget();
    const output = new Output({format: new WebMOutputFormat({appendOnly}), target});
    const source = new EncodedAudioPacketSource("opus");
    output.addAudioTrack(source);
    await output.start();
    let first = true;
    for await (const packet of new EncodedPacketSink(track).packets()) {
        await source.add(packet, first ? {decoderConfig} : undefined);
        first = false;
    }
    await output.finalize();
    input.dispose();
    return new Uint8Array(target.buffer!);
}
