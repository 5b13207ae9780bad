import { describe, expect, it } from "vitest";
import { FakeSpeechEngine } from "../support/FakeSpeechEngine.js";
import { jsonOf, startTestServer } from "../support/startTestServer.js";
import { storiesModelPath } from "../support/testModels.js";

// A non-streamed speech answer still being synthesized when the shutdown's grace ends is answered 503
// (server_shutting_down) at once, as a transcription is, though the engine goes on with its sentence (an ONNX worker
// cannot be interrupted mid-sentence): it waited for the sentence, and the connection was cut first ("Empty reply from
// server", found by a user trial). The engine's second sentence here waits for a gate the test opens only after the answer.
describe("speech in progress when the shutdown's grace ends", () => {
    it("is answered 503 server_shutting_down at once, the sentence in progress going on", async () => {
        let reached!: () => void;
        const waiting = new Promise<void>((resolve) => reached = resolve);
        let open!: () => void;
        const gate = new Promise<void>((resolve) => open = resolve);
        const server = await startTestServer({
            models: [{id: "speech", task: "speech", path: storiesModelPath}], config: {shutdownTimeoutMs: 100},
            factories: {speech: async () => new FakeSpeechEngine("speech", {sampleRate: 24000, hasSpeedInput: true, beforeSentence: async (index) => {
                if (index === 1) {
                    reached();
                    await gate; // the signal is not heeded: as a sentence in a worker
                }
            }})}
        });
        const answer = server.post("/v1/audio/speech", {model: "speech", input: "One. Two.", voice: "alloy", response_format: "wav", stream: false});
        await waiting;
        const stopping = server.stop();
        const response = await answer;
        expect(response.status).toBe(503);
        expect((await jsonOf(response)).error).toMatchObject({code: "server_shutting_down"});
        open();
        await stopping;
    }, 30_000);
});
