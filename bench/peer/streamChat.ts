import { readSseEvents } from "../readSseEvents.js";

/** What one streamed chat completion looked like from the client. Times are `performance.now()` ms. */
export type ChatTiming = {
    start: number, firstToken: number, end: number, text: string, completionTokens: number, promptTokens: number, cachedTokens: number | null,
    /** llama-server's own account (its `timings` field): ms per generated token, and ms of prompt evaluation; null from our server. */
    peerPerTokenMs: number | null, peerPromptMs: number | null
};

/**
 * One streamed POST /v1/chat/completions (readSseEvents), the same for both servers:
 * the first token is the first chunk with non-empty content, the end is the finish_reason chunk.
 */
export async function streamChat(baseUrl: string, body: Record<string, unknown>, start = performance.now()): Promise<ChatTiming> {
    const response = await fetch(`${baseUrl}/v1/chat/completions`, {
        method: "POST",
        signal: AbortSignal.timeout(300_000),
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({...body, stream: true, stream_options: {include_usage: true}})
    });
    if (response.status !== 200 || response.body == null)
        throw new Error(`${baseUrl}: POST /v1/chat/completions: ${response.status} ${await response.text()}`);
    let firstToken = NaN;
    let end = NaN;
    let text = "";
    let peerPerTokenMs: number | null = null;
    let peerPromptMs: number | null = null;
    let usage: {prompt_tokens: number, completion_tokens: number, prompt_tokens_details?: {cached_tokens?: number}} | null = null;
    for await (const {data: chunk, receivedAt} of readSseEvents(response.body)) {
        if (chunk === "[DONE]")
            break;
        const choice = chunk.choices?.[0];
        const content = choice?.delta?.content;
        if (typeof content === "string" && content !== "") {
            if (text === "")
                firstToken = receivedAt;
            text += content;
        }
        if (choice?.finish_reason != null)
            end = receivedAt;
        if (chunk.usage != null)
            usage = chunk.usage;
        if (typeof chunk.timings?.predicted_per_token_ms === "number")
            peerPerTokenMs = chunk.timings.predicted_per_token_ms;
        if (typeof chunk.timings?.prompt_ms === "number")
            peerPromptMs = chunk.timings.prompt_ms;
    }
    if (usage == null)
        throw new Error(`${baseUrl}: the stream ended without usage`);
    return {
        start, firstToken, end, text, completionTokens: usage.completion_tokens, promptTokens: usage.prompt_tokens,
        cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? null, peerPerTokenMs, peerPromptMs
    };
}
