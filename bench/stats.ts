/** What one generated stream looked like from the caller's side. Times are `performance.now()` ms. */
export type StreamTiming = {
    /** When the caller started the generation (called evaluate / sent the request). */
    start: number;
    /** When the first completion token (raw) or the first non-empty content chunk (server) arrived. */
    firstToken: number;
    /** When the last completion token (raw) or the finish_reason chunk (server) arrived. */
    end: number;
    completionTokens: number;
    promptTokens: number;
    text: string;
};

/** N streams started together. */
export type RunResult = {
    start: number;
    streams: StreamTiming[];
};

export type SingleStreamFigures = {decodeTps: number, ttftMs: number, aggregateTps: number};

/** Decode speed: the tokens after the first over the time after the first token. */
export function decodeTokensPerSecond(stream: StreamTiming): number {
    return (stream.completionTokens - 1) / ((stream.end - stream.firstToken) / 1000);
}

export function timeToFirstTokenMs(stream: StreamTiming): number {
    return stream.firstToken - stream.start;
}

/** All completion tokens of all streams over the wall time from the common start to the last end. */
export function aggregateTokensPerSecond(run: RunResult): number {
    const tokens = run.streams.reduce((sum, stream) => sum + stream.completionTokens, 0);
    const end = Math.max(...run.streams.map((stream) => stream.end));
    return tokens / ((end - run.start) / 1000);
}

export function median(values: readonly number[]): number {
    if (values.length === 0)
        return NaN;
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The value below which a share `p` (0.99: p99) of `values` lie. */
export function percentile(values: readonly number[], p: number): number {
    return [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];
}

/** Throws unless every stream produced exactly `tokens` completion tokens (the comparison is meaningless otherwise). */
export function assertFixedLength(run: RunResult, tokens: number, what: string) {
    for (const [index, stream] of run.streams.entries())
        if (stream.completionTokens !== tokens)
            throw new Error(`${what}: stream ${index} generated ${stream.completionTokens} tokens instead of ${tokens}`);
}

export function fixed(value: number, digits = 1): string {
    return Number.isFinite(value) ? value.toFixed(digits) : "n/a";
}

/** The generation both sides run. Stream `i` of a concurrent run uses seed `seed + i`. */
export type GenerationSettings = {
    prompt: string;
    maxTokens: number;
    temperature: number;
    topP: number;
    seed: number;
    /** Ban the model's EOS token (logit bias -100) so every stream generates exactly `maxTokens`. */
    eosToken: number;
    /** Server only: ask for `logprobs: true` with this many `top_logprobs`. */
    topLogprobs?: number;
};
