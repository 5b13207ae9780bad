/** One `data:` event of a server-sent-events stream: its JSON (or the string "[DONE]") and when its bytes arrived. */
export type SseEvent = {data: any, receivedAt: number};

/**
 * The `data:` events of a streamed response, parsed by hand (no SDK) to keep the benches' client
 * overhead small and the same for every server: comments (pings) skipped, an `event: error` or a
 * chunk carrying `error` thrown, `[DONE]` passed on as the string. Ends with the body.
 */
export async function* readSseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
    let buffer = "";
    const decoder = new TextDecoder();
    const reader = body.getReader();
    try {
        for (;;) {
            const {value, done} = await reader.read();
            if (done)
                return;
            const receivedAt = performance.now();
            buffer += decoder.decode(value, {stream: true});
            let boundary: number;
            while ((boundary = buffer.indexOf("\n\n")) >= 0) {
                const event = buffer.slice(0, boundary);
                buffer = buffer.slice(boundary + 2);
                if (event.startsWith("event: error"))
                    throw new Error(`Error event in the stream: ${event}`);
                if (!event.startsWith("data: "))
                    continue;
                const text = event.slice("data: ".length);
                const data = text === "[DONE]" ? text : JSON.parse(text);
                if (data?.error != null)
                    throw new Error(`Error in the stream: ${JSON.stringify(data.error)}`);
                yield {data, receivedAt};
            }
        }
    } finally {
        await reader.cancel().catch(() => {});
    }
}
