/**
 * An incremental encoder for one response: mono Float32 samples in [-1, 1] go in, chunks of the container's bytes come out.
 * The decoded audio does not depend on how the input was split into pushes.
 * Both calls are async because some codecs run in WebAssembly that is loaded lazily or in a worker thread;
 * an empty array means "nothing ready yet", not the end.
 */
export type AudioEncoder = {
    /** The HTTP Content-Type of the bytes, as OpenAI sends it. */
    readonly contentType: string;
    /** The sample rate of the encoded audio (after any resampling). */
    readonly sampleRate: number;
    push(samples: Float32Array): Promise<Uint8Array>;
    /**
     * Flushes everything still held back and releases the codec (WebAssembly memory, AAC's worker thread):
     * call it also when the response is abandoned, and discard its bytes. The encoder is unusable afterwards.
     */
    end(): Promise<Uint8Array>;
};
