import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { startTestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";

// The test server's own folder (its manifest, keys and caches) is removed when a preloaded model fails to load, as when
// the server does not start: a test that meets a model the server cannot load leaves nothing in the temp folder.
it("a test server whose model fails to load closes and leaves no folder behind", async () => {
    const ours = () => fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith("los-test-"));
    const before = ours();
    const modelPath = path.join(testModelsDir, "test-server-cleanup.gguf");
    fs.mkdirSync(testModelsDir, {recursive: true});
    // A template that raises on every conversation: node-llama-cpp's check of it fails, so the model does not load.
    await makeTestLlamaGguf(modelPath, {seed: 1, chatTemplate: "{{ raise_exception('no conversation') }}"});
    await expect(startTestServer({models: [{id: "unloadable", task: "chat", path: modelPath, contextSize: 512, parallel: 1}]})).rejects.toThrow();
    expect(ours().filter((name) => !before.includes(name))).toEqual([]);
});
