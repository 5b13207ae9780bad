import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LlamaText, SpecialToken, SpecialTokensText, type LlamaModel } from "node-llama-cpp";
import { makeTestLlamaGguf, type TestLlamaGgufOptions } from "./gguf/makeTestLlamaGguf.js";
import { testModelsDir } from "./testModels.js";

/** test/fixtures/templates: the real chat templates of thinking models (its README names their sources). */
export const realTemplatesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/templates");

/**
 * A generated GGUF carrying a thinking model's real chat template, with the template's special tokens in its
 * vocabulary as the real model has them (user-defined when llama.cpp renders them as text, control otherwise), and
 * scripted (makeTestLlamaGguf's `script`) so its greedy output is known: with thinking on it thinks "I think" and
 * answers "Hello world"; with thinking off (the template's switch, or the block the engine closes) it answers
 * "Hello world" straight away. The script starts from the last token of the template's generation prompt.
 */
export type RealTemplateModel = {
    id: string,
    /** The template's file in test/fixtures/templates. */
    file: string,
    template: string,
    format: "think-tags" | "gemma4" | "harmony",
    /** The template has Qwen3's `enable_thinking` switch (so thinking off is the template's own rendering). */
    switch: boolean,
    path: string,
    gguf: TestLlamaGgufOptions,
    /** With thinking on, the tokens it writes (the end of generation aside), and those of its reasoning (up to its closing markup). */
    tokens: {completion: number, reasoning: number}
};

const qwenTokens = {
    userDefinedVocab: ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"],
    controlVocab: ["<|endoftext|>"]
};
/** After the generation prompt's open `<think>\n` (DeepSeek-R1, QwQ, Qwen3-2507): the thought, the closing tag, the answer. */
const openThoughtScript: [string, string][] = [
    ["\n", "▁I"], ["▁I", "▁think"], ["▁think", "</think>"], ["</think>", "\n\n"], ["\n\n", "Hello"], ["Hello", "▁world"], ["▁world", "<|im_end|>"]
];
// gpt-oss's channel headers as single pieces: a script passes through each piece once, and harmony repeats its tokens.
const analysisHeader = "<|channel|>analysis<|message|>";
const finalHeader = "<|end|><|start|>assistant<|channel|>final<|message|>";

const models: Omit<RealTemplateModel, "template" | "path">[] = [
    {
        // The model decides after `<|im_start|>assistant\n`; `enable_thinking: false` renders `<think>\n\n</think>\n\n`.
        id: "qwen3", file: "Qwen-Qwen3-0.6B.jinja", format: "think-tags", switch: true, tokens: {completion: 7, reasoning: 4},
        gguf: {
            ...qwenTokens, extraVocab: ["\n\n", "Hello"],
            script: [["\n", "<think>"], ["<think>", "▁I"], ...openThoughtScript.slice(1)]
        }
    },
    {id: "qwen3-2507", file: "Qwen-Qwen3-4B-Thinking-2507.jinja", format: "think-tags", switch: false, tokens: {completion: 6, reasoning: 3},
        gguf: {...qwenTokens, extraVocab: ["\n\n", "Hello"], script: openThoughtScript}},
    {id: "qwq", file: "Qwen-QwQ-32B.jinja", format: "think-tags", switch: false, tokens: {completion: 6, reasoning: 3},
        gguf: {...qwenTokens, extraVocab: ["\n\n", "Hello"], script: openThoughtScript}},
    {
        id: "r1-distill", file: "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", format: "think-tags", switch: false, tokens: {completion: 6, reasoning: 3},
        gguf: {
            userDefinedVocab: ["<｜User｜>", "<｜Assistant｜>", "<think>", "</think>"],
            controlVocab: ["<｜end▁of▁sentence｜>", "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>",
                "<｜tool▁calls▁end｜>", "<｜tool▁outputs▁begin｜>", "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>", "<｜tool▁outputs▁end｜>"],
            extraVocab: ["\n\n", "Hello"], script: openThoughtScript
        }
    },
    {
        // The model decides after `<|assistant|>` (it writes `\n<think>`); thinking off: `/nothink` and `<|assistant|>\n<think></think>`.
        id: "glm-4.5", file: "zai-org-GLM-4.5.jinja", format: "think-tags", switch: true, tokens: {completion: 7, reasoning: 5},
        gguf: {
            userDefinedVocab: ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"],
            controlVocab: ["[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>", "<|endoftext|>"],
            extraVocab: ["\n", "Hello"],
            script: [["<|assistant|>", "\n"], ["\n", "<think>"], ["<think>", "▁I"], ["▁I", "▁think"], ["▁think", "</think>"], ["</think>", "Hello"],
                ["Hello", "▁world"], ["▁world", "<|im_end|>"]]
        }
    },
    {
        // The model decides after `<|turn>model\n` (it writes `<|channel>thought`); thinking off: the template's switch
        // (`enable_thinking`, whose default the server gives as on, as llama-server does), `<|channel>thought\n<channel|>`.
        id: "gemma4", file: "google-gemma-4-31B-it.jinja", format: "gemma4", switch: true, tokens: {completion: 6, reasoning: 4},
        gguf: {
            userDefinedVocab: ["<|turn>", "<turn|>", "<|channel>", "<channel|>", "<|think|>", "<|tool_call>", "<tool_call|>", "<|tool>", "<tool|>",
                "<|tool_response>", "<tool_response|>", '<|"|>'],
            extraVocab: ["\n", "<|channel>thought", "Hello"],
            script: [["\n", "<|channel>thought"], ["<|channel>thought", "▁I"], ["▁I", "▁think"], ["▁think", "<channel|>"], ["<channel|>", "Hello"],
                ["Hello", "▁world"], ["▁world", "<|im_end|>"]]
        }
    },
    {
        // The model writes its channels after `<|start|>assistant`; thinking off opens the final channel.
        id: "gpt-oss", file: "openai-gpt-oss-120b.jinja", format: "harmony", switch: false, tokens: {completion: 6, reasoning: 4},
        gguf: {
            // llama.cpp renders gpt-oss's <|start|>, <|channel|>, <|message|> as text; <|end|>, <|return|>, <|call|> stay control tokens.
            userDefinedVocab: ["<|start|>", "<|channel|>", "<|message|>", "<|constrain|>"],
            controlVocab: ["<|end|>", "<|return|>", "<|call|>", "<|endoftext|>"],
            extraVocab: [analysisHeader, finalHeader, "Hello"],
            script: [["▁assistant", analysisHeader], [analysisHeader, "▁I"], ["▁I", "▁think"], ["▁think", finalHeader], [finalHeader, "Hello"],
                ["<|message|>", "Hello"], ["Hello", "▁world"], ["▁world", "<|im_end|>"]]
        }
    }
];

export const realTemplateModels: RealTemplateModel[] = models.map((model) => ({
    ...model,
    template: fs.readFileSync(path.join(realTemplatesDir, model.file), "utf8"),
    path: path.join(testModelsDir, `real-template-${model.id}.gguf`)
}));

/** Writes the models' GGUFs (tens of milliseconds each). */
export async function writeRealTemplateModels(): Promise<void> {
    fs.mkdirSync(testModelsDir, {recursive: true});
    for (const [index, model] of realTemplateModels.entries())
        await makeTestLlamaGguf(model.path, {seed: 40 + index, chatTemplate: model.template, name: `real-template-${model.id}`, ...model.gguf});
}

/** The text of a rendered prompt, special tokens as the vocabulary spells them (`<s>` for BOS). */
export function promptText(model: LlamaModel, text: LlamaText | null): string {
    const pieces = model.fileInfo.metadata.tokenizer!.ggml!.tokens as readonly string[];
    return LlamaText(text ?? "").values.map((value) => {
        if (typeof value === "string")
            return value;
        if (value instanceof SpecialTokensText)
            return value.value;
        const token = value instanceof SpecialToken ? model.tokens[value.value.toLowerCase() as "bos" | "eos"] : null;
        if (token == null)
            throw new Error(`No text for ${JSON.stringify(value)}`);
        return pieces[token];
    }).join("");
}
