import type OpenAI from "openai";

/** Time to the first content token of a short greedy chat stream (ms): the probe the speech and images benchmarks run while they load the server. */
export async function chatTtft(client: OpenAI, model = "chat") {
    const started = performance.now();
    const stream = await client.chat.completions.create({model, messages: [{role: "user", content: "hi"}], max_tokens: 16, stream: true, temperature: 0});
    let first = 0;
    for await (const chunk of stream)
        if ((chunk.choices[0]?.delta?.content ?? "") !== "" && first === 0)
            first = performance.now() - started;
    return first;
}
