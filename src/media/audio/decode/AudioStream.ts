/** The containers decodeAudio reads, recognised by their bytes. */
export type AudioContainer = "wav" | "mp3" | "flac" | "ogg-opus" | "ogg-vorbis" | "webm-opus";

/** A piece of decoded audio, channel by channel (the same length each), at the rate the file says. */
export type AudioChunk = {
    channels: Float32Array[];
    sampleRate: number;
    /** The first damaged frame the decoder skipped in this piece, if any. */
    error?: string;
};

/**
 * A file opened for decoding: what its header declares, checked before anything is decoded, then its
 * audio a bounded piece at a time. Leaving the loop early (a refusal, a cancelled request) frees the decoder.
 */
export type AudioStream = {
    format: AudioContainer;
    /** The rate the header declares, or null when the decoder tells it only with the first piece. */
    sampleRate: number | null;
    /** Seconds of audio the header declares (WAV's data size, FLAC's STREAMINFO, MP3's Xing frame count, Ogg's last granule position, WebM's duration), or null. */
    seconds: number | null;
    /**
     * Whether `seconds` is the length exactly, the decoder holding the file to it (WAV reads its data chunk only;
     * FLAC refuses frames past STREAMINFO's total). Otherwise the length is a claim (MP3s are concatenated after
     * their Xing header, Ogg files chained, WebM durations rewritten) or unknown, and decodeAudio counts first.
     */
    exact: boolean;
    chunks: AsyncIterable<AudioChunk>;
};
