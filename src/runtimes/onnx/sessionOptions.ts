/** ONNX Runtime session options of the transformers.js models (speech, transcription, embeddings; the raw sessions of images add to them): `threads` intra-op threads, no spinning. */
export function sessionOptions(threads: number) {
    return {
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        executionMode: "sequential" as const,
        // Spinning threads burn a core while idle; measured slower on a busy 2-core machine (embeddings).
        extra: {session: {intra_op: {allow_spinning: "0"}, inter_op: {allow_spinning: "0"}}}
    };
}
