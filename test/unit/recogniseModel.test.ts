import { describe, expect, it } from "vitest";
import { manifestParts } from "../../src/capabilities/manifestParts.js";
import { recogniseModel, type ModelFacts } from "../../src/capabilities/recogniseModel.js";
import { hubTask } from "../../src/download/hubRepoEntry.js";

// The built-in capabilities' rules (their *ManifestPart.ts), as `npm start -- <paths>` and `download-models -- <repo>` apply them.
const taskOf = (facts: ModelFacts) => recogniseModel(facts, manifestParts);

describe("recognising a model's task by the capabilities' own rules", () => {
    it("ONNX folders: a marker file, then config.json architectures, then model_type", () => {
        expect(taskOf({gguf: false, folderFiles: ["model_index.json"]})).toEqual({task: "image"});
        expect(taskOf({gguf: false, architectures: ["BertModel"], modelType: "bert"})).toEqual({task: "embeddings"});
        expect(taskOf({gguf: false, modelType: "xlm-roberta"})).toEqual({task: "embeddings"});
        expect(taskOf({gguf: false, architectures: ["VitsModel"], modelType: "vits"})).toEqual({task: "speech"});
        expect(taskOf({gguf: false, modelType: "style_text_to_speech_2"})).toEqual({task: "speech"});
        expect(taskOf({gguf: false, architectures: ["WhisperForConditionalGeneration"], modelType: "whisper"})).toEqual({task: "transcription"});
    });

    it("a cross-encoder (a bert / xlm-roberta sequence classifier) is a reranker, not embeddings; another sequence classifier is refused, saying what it is", () => {
        for (const [architecture, modelType] of [["BertForSequenceClassification", "bert"], ["XLMRobertaForSequenceClassification", "xlm-roberta"]])
            expect(taskOf({gguf: false, architectures: [architecture], modelType})).toEqual({task: "rerank"});
        const recognised = taskOf({gguf: false, architectures: ["DebertaV2ForSequenceClassification"], modelType: "deberta-v2"});
        expect(recognised).toEqual({refused: expect.stringContaining("is a sequence classifier (a text classifier") as unknown});
        expect((recognised as {refused: string}).refused).toContain("no capability serves classification models yet (config.json architectures DebertaV2ForSequenceClassification).");
    });

    it("GGUFs: pooled (mean, cls, last) and embedding architectures are embeddings, rank pooling a reranker, any other chat", () => {
        expect(taskOf({gguf: true, ggufArchitecture: "llama", ggufPoolingType: 1})).toEqual({task: "embeddings"});
        expect(taskOf({gguf: true, ggufArchitecture: "nomic-bert"})).toEqual({task: "embeddings"});
        expect(taskOf({gguf: true, ggufArchitecture: "llama"})).toEqual({task: "chat"});
        expect(taskOf({gguf: true, ggufArchitecture: "qwen2", ggufPoolingType: 0})).toEqual({task: "chat"});
        expect(taskOf({gguf: true, ggufArchitecture: "bert", ggufPoolingType: 4})).toEqual({task: "rerank"});
    });

    it("an ONNX folder no capability recognises is refused, listing what each recognises", () => {
        const recognised = taskOf({gguf: false, architectures: ["T5ForConditionalGeneration"], modelType: "t5"});
        expect(recognised).toEqual({refused: expect.stringMatching(/^says config\.json architectures T5ForConditionalGeneration; config\.json model_type t5, which no capability serves \(chat: architectures SmolVLMForConditionalGeneration, Idefics3ForConditionalGeneration; model_type smolvlm, idefics3; any other GGUF; pipeline_tag .*\| embeddings: model_type bert, roberta, .*\| image: a model_index\.json; pipeline_tag text-to-image \| .*transcription: model_type whisper; pipeline_tag automatic-speech-recognition\)\. Write a models\.json manifest to name its task\.$/) as unknown});
    });

    it("hub repositories: the pipeline_tag, a top-level model_index.json, an untagged GGUF chat; a reranker's tag rerank, a classifier's refused", () => {
        const hub = (gguf: boolean, pipelineTag: string | null, topFiles: string[] = []) => hubTask("someone/repo", {gguf, topFiles, pipelineTag}, manifestParts);
        expect(hub(false, "feature-extraction")).toBe("embeddings");
        expect(hub(true, "sentence-similarity")).toBe("embeddings");
        expect(hub(false, "text-to-speech")).toBe("speech");
        expect(hub(false, "text-to-audio")).toBe("speech");
        expect(hub(false, "automatic-speech-recognition")).toBe("transcription");
        expect(hub(false, "text-to-image")).toBe("image");
        expect(hub(false, null, ["model_index.json", "README.md"])).toBe("image");
        expect(hub(true, null)).toBe("chat");
        expect(hub(true, "text-generation")).toBe("chat");
        expect(hub(true, "image-text-to-text")).toBe("chat");
        expect(hub(true, "some-new-tag")).toBe("chat");
        expect(hub(true, "text-ranking")).toBe("rerank");
        expect(hub(false, "text-ranking")).toBe("rerank");
        expect(() => hub(false, "text-classification")).toThrow("someone/repo is a sequence classifier (a text classifier");
        expect(() => hub(false, "text-classification")).toThrow("(hub pipeline_tag text-classification).");
        expect(() => hub(false, null, ["config.json"])).toThrow("someone/repo says nothing a capability recognises its models by (chat: architectures SmolVLMForConditionalGeneration, Idefics3ForConditionalGeneration; model_type smolvlm, idefics3; any other GGUF;");
    });
});
