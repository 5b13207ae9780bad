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

/**
 * Chat time to the first token, `samples` times idle, then `samples` times while `streams` loops each run `request`
 * back to back (the samples start once `/health` says `model` is busy): whether the main thread stays free while the
 * workers are at work. `requests`: how many of them ran during the loaded samples.
 */
export async function chatTtftUnderLoad(client: OpenAI, baseUrl: string, load: {model: string, streams: number, samples: number, request: () => Promise<unknown>}) {
    const idle: number[] = [];
    for (let i = 0; i < load.samples; i++)
        idle.push(await chatTtft(client));
    let running = true;
    let requests = 0;
    const loops = Promise.all(Array.from({length: load.streams}, async () => {
        while (running) {
            await load.request();
            requests++;
        }
    }));
    while ((await (await fetch(`${baseUrl}/health`)).json() as {models: Record<string, {busy: number}>}).models[load.model].busy === 0)
        await new Promise((resolve) => setTimeout(resolve, 5));
    const busy: number[] = [];
    for (let i = 0; i < load.samples; i++)
        busy.push(await chatTtft(client));
    running = false;
    await loops;
    return {idle, busy, requests};
}
