/** Occupies `count` workers of a test server's pool through the gate capability, resolving once every one of them runs. */
export async function holdWorkers(url: string, count: number, headers: Record<string, string> = {}) {
    const holds = await Promise.all(Array.from({length: count}, async () => {
        const response = await fetch(`${url}/v1/gate/hold`, {
            method: "POST", headers: {"Content-Type": "application/json", ...headers}, body: JSON.stringify({model: "gate"})
        });
        if (response.status !== 200)
            throw new Error(`gate hold answered ${response.status}: ${await response.text()}`);
        const reader = response.body!.getReader();
        const decoder = new TextDecoder();
        let text = "";
        while (!text.includes("event: held")) {
            const {done, value} = await reader.read();
            if (done)
                throw new Error(`gate hold ended before holding a worker: ${text}`);
            text += decoder.decode(value, {stream: true});
        }
        /** The rest of the response, once the gate opens or the request is cancelled. */
        const rest: Promise<string> = (async () => {
            for (;;) {
                const {done, value} = await reader.read().catch(() => ({done: true, value: undefined}));
                if (done)
                    return text;
                text += decoder.decode(value, {stream: true});
            }
        })();
        return {rest};
    }));
    /** Resolves with each hold's whole response once the gate opens or the requests are cancelled. */
    return {ended: Promise.all(holds.map((hold) => hold.rest))};
}
