/** One manifest entry after validation, with its path made absolute and its task's settings parsed. */
export type ModelEntry<Settings = unknown> = {
    id: string;
    /** The capability that serves it (`chat`, `embeddings`, `speech`, `image`). */
    task: string;
    /** Absolute path of the model file or folder. */
    path: string;
    family: string | null;
    /** ISO date (YYYY-MM-DD) the variant was released; orders `<family>-latest`. */
    released: string | null;
    aliases: string[];
    ownedBy: string;
    /** Tokens per sequence for chat models; null = the model's training context. */
    contextSize: number | null;
    /** CPU threads for this model; null = the server's `threads` setting. */
    threads: number | null;
    /** Requests (chat: sequences) served at once; null = the server's `parallel` setting. */
    parallel: number | null;
    /** ONNX models: how many of the worker pool's threads load it (default: all); 1 = one copy in the process. */
    workers?: number;
    /** Load at start rather than on the first request; undefined = the server's `--preload-all`. */
    preload?: boolean;
    /** Idle time before the model is unloaded, in ms; null = never; undefined = the server's `--keep-alive`. */
    keepAliveMs?: number | null;
    /** Never evicted to make room for another model (an idle keep-alive still applies; `keepAlive: "forever"` with it keeps it for good). */
    pin?: boolean;
    /** The fields only this task's entries have, parsed by its capability (see ManifestSettings). */
    settings: Settings;
};
