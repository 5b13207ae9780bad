import type { AudioStream } from "./AudioStream.js";
import { decodeInSlices } from "./decodeInSlices.js";
import { mp3DeclaredSeconds } from "./mp3DeclaredSeconds.js";

/**
 * MP3 through mpg123-decoder (mpg123). Its rates are MPEG's own (8 to 48 kHz); the length is known up front
 * when the encoder wrote a Xing/Info or VBRI header. mpg123-decoder always hands out two channels (a mono
 * stream has them equal, and averaging keeps it).
 */
export function openMp3(bytes: Uint8Array): AudioStream {
    return {
        format: "mp3", sampleRate: null, seconds: mp3DeclaredSeconds(bytes), exact: false,
        chunks: decodeInSlices("mp3", bytes, async () => new (await import("mpg123-decoder")).MPEGDecoder())
    };
}
