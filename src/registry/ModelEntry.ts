export const modelTasks = ["chat", "embeddings", "speech", "image"] as const;
export type ModelTask = typeof modelTasks[number];

/** The HTTP endpoints a model of each task answers; `/v1/models` lists them per model. */
export const endpointsByTask: Record<ModelTask, string[]> = {
    chat: ["/v1/chat/completions"],
    embeddings: ["/v1/embeddings"],
    speech: ["/v1/audio/speech"],
    image: ["/v1/images/generations"]
};

/** One manifest entry after validation, with its path made absolute. */
export type ModelEntry = {
    id: string;
    task: ModelTask;
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
    /** Concurrent sequences for this chat model; null = the server's `parallel` setting. */
    parallel: number | null;
};
