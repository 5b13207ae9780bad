// The poller process of bench/livePoller.ts: polls `<start>/health/live` every 10 ms from a "start" message until a
// "stop" message, then sends the latencies back (a poll still waiting counts with the time it waited so far).
let run = 0;
let pollStarted = null;
let latencies = [];
process.on("message", (message) => {
    if (message.start != null) {
        const mine = ++run;
        latencies = [];
        void (async () => {
            while (run === mine) {
                pollStarted = performance.now();
                const response = await fetch(`${message.start}/health/live`).catch(() => null);
                await response?.arrayBuffer().catch(() => {});
                if (run !== mine)
                    break;
                latencies.push(performance.now() - pollStarted);
                pollStarted = null;
                await new Promise((resolve) => setTimeout(resolve, 10));
            }
        })();
        return;
    }
    run++;
    if (pollStarted != null)
        latencies.push(performance.now() - pollStarted);
    pollStarted = null;
    process.send(latencies);
});
process.on("disconnect", () => process.exit(0));
process.send("ready");
