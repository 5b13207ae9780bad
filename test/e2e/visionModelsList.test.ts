import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyBertPath, tinyChatModelPath, tinySmolVlmPath } from "../support/testModels.js";

// `/v1/models` says which models take images, in OpenRouter's `architecture.input_modalities` (docs/api.md): read
// through the official `openai` client unchanged, and in the library's `GET /models` the playground reads.
let server: TestServer;
let openai: OpenAI;

beforeAll(async () => {
    server = await startTestServer({models: [
        {id: "smolvlm", task: "chat", path: tinySmolVlmPath},
        {id: "llama", task: "chat", path: tinyChatModelPath},
        {id: "bert", task: "embeddings", path: tinyBertPath}
    ]});
    openai = new OpenAI({baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0});
});
afterAll(() => server?.stop());

type Listed = OpenAI.Models.Model & {architecture?: {modality: string, input_modalities: string[], output_modalities: string[]}};

describe("which models take images", () => {
    it("/v1/models, read by the openai client: a vision model takes text and images, a GGUF chat model text; other tasks say nothing", async () => {
        const listed = new Map<string, Listed>();
        for await (const model of openai.models.list())
            listed.set(model.id, model as Listed);
        expect([...listed.keys()]).toEqual(["smolvlm", "llama", "bert"]);
        expect(listed.get("smolvlm")!.architecture).toEqual({modality: "text+image->text", input_modalities: ["text", "image"], output_modalities: ["text"]});
        expect(listed.get("llama")!.architecture).toEqual({modality: "text->text", input_modalities: ["text"], output_modalities: ["text"]});
        expect(listed.get("bert")!.architecture).toBeUndefined();
        expect(listed.get("smolvlm")!.object).toBe("model");
        const one = await openai.models.retrieve("smolvlm") as Listed;
        expect(one.architecture?.input_modalities).toContain("image");
    });

    it("GET /models (the library's list) says the same", async () => {
        const library = await jsonOf(await fetch(`${server.url}/models`));
        const byId = Object.fromEntries(library.data.map((model: Listed) => [model.id, model.architecture?.input_modalities ?? null]));
        expect(byId).toEqual({smolvlm: ["text", "image"], llama: ["text"], bert: null});
    });
});
