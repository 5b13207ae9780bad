import decodeAac from "@audio/decode-aac";
import { MPEGDecoder } from "mpg123-decoder";
import { OggOpusDecoder } from "ogg-opus-decoder";

export type Decoded = {samples: Float32Array; sampleRate: number; channels: number};

/** Each lossy format through an independent decoder from npm: mpg123, libopus (with Ogg demuxing), FAAD2. */
export async function decodeLossy(format: "mp3" | "opus" | "aac", bytes: Uint8Array): Promise<Decoded> {
    if (format === "aac") {
        const {channelData, sampleRate} = await decodeAac(bytes);
        return {samples: channelData[0], sampleRate, channels: channelData.length};
    }
    const decoder = format === "mp3" ? new MPEGDecoder() : new OggOpusDecoder();
    await decoder.ready;
    try {
        const {channelData, sampleRate, errors} = decoder instanceof MPEGDecoder ? decoder.decode(bytes) : await decoder.decodeFile(bytes);
        if (errors.length > 0) throw new Error(`decode errors: ${JSON.stringify(errors)}`);
        // mpg123-decoder always hands out two channels; what the stream holds is the first frame header's mode (3 = mono).
        const channels = format === "mp3" ? (bytes[0] === 0xFF && bytes[3] >> 6 === 3 ? 1 : 2) : channelData.length;
        return {samples: channelData[0], sampleRate, channels};
    } finally {
        decoder.free();
    }
}
