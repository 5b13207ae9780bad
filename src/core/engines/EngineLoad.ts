/** How busy an engine is, as /health reports it. */
export type EngineLoad = {
    /** Requests (or, for chat, sequences) the model can serve at once. */
    parallel: number;
    /** Of those, busy right now. */
    busy: number;
    /** Requests waiting for a place. */
    waiting: number;
    /** What else an engine reports about itself (a chat model: its llama.cpp binary, prompt-cache hits). */
    details?: Record<string, unknown>;
};
