import type { Config } from "../../src/config.js";
import { FakeChatEngine } from "./FakeChatEngine.js";
import { FakeTranscriptionEngine } from "./FakeTranscriptionEngine.js";
import { startTestServer, type TestServer } from "./startTestServer.js";
import { tinyChatModelPath, tinyWhisperPath } from "./testModels.js";

/**
 * A server with a fake chat model "fake" (answers "ok") and a fake transcription model "whisper": for the tests of
 * what happens to a JSON route and an upload route before their handlers run (keys, origins, Expect).
 */
export async function startChatAndWhisperServer(options: {config?: Partial<Config>, apiKey?: string, logLines?: string[]} = {}) {
    const chat = new FakeChatEngine("fake", {pieces: ["ok"]});
    const whisper = new FakeTranscriptionEngine("whisper");
    const server: TestServer = await startTestServer({
        models: [{id: "fake", task: "chat", path: tinyChatModelPath}, {id: "whisper", task: "transcription", path: tinyWhisperPath}],
        config: options.config, apiKey: options.apiKey, logLines: options.logLines,
        factories: {chat: async () => chat, transcription: async () => whisper}
    });
    return {server, chat, whisper};
}

/** A chat request for "fake". */
export const chatBody = JSON.stringify({model: "fake", messages: [{role: "user", content: "hi"}]});

export const uploadBoundary = "----form";
/** A transcription upload for "whisper": what a page's `<form enctype="multipart/form-data">` sends. */
export const uploadBody = [
    `--${uploadBoundary}`, 'Content-Disposition: form-data; name="model"', "", "whisper",
    `--${uploadBoundary}`, 'Content-Disposition: form-data; name="file"; filename="a.wav"', "Content-Type: audio/wav", "", "RIFF....WAVEfmt ",
    `--${uploadBoundary}--`, ""
].join("\r\n");
