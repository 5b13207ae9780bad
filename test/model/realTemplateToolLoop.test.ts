import fs from "node:fs";
import path from "node:path";
import { Template } from "@huggingface/jinja";
import { expect, it } from "vitest";
import type { ChatJob, ChatTurn, ReasoningFormat } from "../../src/capabilities/chat/ChatEngine.js";
import { TemplateRefusedError } from "../../src/capabilities/chat/errors/TemplateRefusedError.js";
import { ChatPromptRenderer } from "../../src/capabilities/chat/llama/ChatPromptRenderer.js";
import { conversationPrompt } from "../../src/capabilities/chat/llama/conversationPrompt.js";
import { pythonCallsText } from "../../src/capabilities/chat/llama/pythonCalls.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { promptText, realTemplateModels, realTemplatesDir } from "../support/realTemplateModels.js";
import { testModelsDir } from "../support/testModels.js";

const job = (turns: ChatTurn[]): ChatJob => ({turns, n: 1, maxTokens: 24, stop: [], jsonObject: false, jsonSchema: null,
    sampling: {temperature: 0, topP: 1, seed: 7, frequencyPenalty: 0, presencePenalty: 0, logitBias: new Map()}});
const functions = [{name: "get_weather", description: "The weather in a city", parameters: {type: "object", properties: {city: {type: "string"}}}}];

/** The OpenAI messages a client sends for `turns`: an assistant turn's calls as `tool_calls`, each result a tool message after it. */
/** The turns as OpenAI messages, the calls' ids numbered in nine digits (what Mistral Small 3.2's template takes, and the server gives it). */
function openAiMessages(turns: readonly ChatTurn[], harmony = false, idOf = (_name: string, index: number) => String(index + 1).padStart(9, "0")): unknown[] {
    let calls = 0;
    return turns.flatMap(({role, content, toolCalls, reasoning}): Record<string, unknown>[] => {
        if (toolCalls == null)
            return [{role, content, ...(reasoning == null ? {} : {reasoning_content: reasoning})}];
        const ids = toolCalls.map((call) => idOf(call.name, calls++));
        // The reasoning sent back as llama-server hands it to templates: `reasoning_content`, and gpt-oss's `thinking`.
        const thought = reasoning == null ? {} : {reasoning_content: reasoning, thinking: reasoning};
        return [
            // llama-server's gpt-oss handler leaves out the content of a message with calls and a reasoning.
            {role, ...(harmony && reasoning != null ? {} : {content}), ...thought, tool_calls: toolCalls.map((call, index) => ({type: "function", id: ids[index], function: {name: call.name, arguments: call.arguments}}))},
            ...toolCalls.map((call, index) => ({role: "tool", tool_call_id: ids[index], content: call.result}))
        ];
    });
}

// The whole prompt of a tool loop in 12 shapes against @huggingface/jinja's rendering of the same OpenAI messages, on the
// real templates (test/fixtures/templates). What it holds the renderer to: Qwen3's and QwQ's templates add to a calls-only
// message's content, which node-llama-cpp leaves out; it then wrote the calls and results into the assistant message
// itself (ChatPromptRenderer gives such messages the content the template needs, decided once per template).
// Not yet: GLM-4.5 (node-llama-cpp detects its call format as one `raw_arguments` JSON argument, which parsing and the
// forced-call grammar use, where the template and the model write one <arg_key>/<arg_value> pair per argument: past calls
// are rendered in the detected format so the prompt and what the model is made to write agree); DeepSeek-R1-Distill's and
// gpt-oss's (node-llama-cpp does not use those templates for calls: its own "||call:" format). Rendering the messages
// through the template ourselves, with a parser per call format as llama-server has, would take these too.
it.each(realTemplateModels.filter((spec) => ["qwen3", "qwen3-2507", "qwq", "gpt-oss", "gemma4"].includes(spec.id)))("a tool loop's whole prompt is the template's rendering: $id", async (spec) => {
    await expectToolLoopsAsTemplate(spec.path, spec.template, spec.format);
}, 60_000);

// Templates that write a call's arguments one by one in markup (parameterMarkup.ts): past calls render per argument, as the
// template renders them (node-llama-cpp wrapped them in one `params` argument holding JSON).
const markupTemplates = [
    {file: "Qwen3-Coder.jinja", format: null, vocab: ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]},
    {file: "GLM-4.6.jinja", format: "think-tags" as const, vocab: ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"]},
    {file: "Qwen3.5-4B.jinja", format: "think-tags" as const, vocab: ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]},
    {file: "GLM-4.7-Flash.jinja", format: "think-tags" as const, vocab: ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"]},
    // The calls in a block whose opening tag node-llama-cpp's prefix began inside (parameterMarkup.ts deriveCallBlock).
    {file: "MiniMax-M2.jinja", format: "think-tags" as const, vocab: ["<think>", "</think>", "<minimax:tool_call>", "</minimax:tool_call>"]},
    {file: "deepseek-ai-DeepSeek-V3.2.jinja", format: "think-tags" as const, vocab: ["<think>", "</think>", "<｜User｜>", "<｜Assistant｜>"]},
    {file: "deepseek-ai-DeepSeek-V4.jinja", format: "think-tags" as const, vocab: ["<think>", "</think>", "<｜User｜>", "<｜Assistant｜>"]},
    {file: "ByteDance-Seed-OSS.jinja", format: "seed" as const, vocab: ["<seed:bos>", "<seed:eos>", "<seed:think>", "</seed:think>", "<seed:tool_call>", "</seed:tool_call>"]},
    {file: "deepseek-ai-DeepSeek-V3.1.jinja", format: "think-tags" as const, vocab: ["<think>", "</think>", "<｜User｜>", "<｜Assistant｜>", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>", "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>", "<｜end▁of▁sentence｜>"]},
    {file: "tencent-Hy3.jinja", format: "hy3" as const, vocab: ["<｜hy_begin_of_sentence:opensource｜>", "<｜hy_User:opensource｜>", "<｜hy_Assistant:opensource｜>", "<｜hy_eos:opensource｜>",
        "<think:opensource>", "</think:opensource>", "<tool_calls:opensource>", "</tool_calls:opensource>", "<tool_call:opensource>", "</tool_call:opensource>"]}
];
const jsonEndedTemplates = ["unsloth-mistral-Devstral-Small-2507.jinja", "Mistral-Small-3.2-24B-Instruct-2506.jinja", "meta-llama-Llama-3.1-8B-Instruct.jinja"];
it.each(markupTemplates)("a tool loop's whole prompt is the template's rendering, arguments in markup: $file", async (spec) => {
    const template = fs.readFileSync(path.join(realTemplatesDir, spec.file), "utf8");
    const modelPath = path.join(testModelsDir, `markup-template-${spec.file}.gguf`);
    fs.mkdirSync(testModelsDir, {recursive: true});
    const glm = spec.file.startsWith("GLM");
    await makeTestLlamaGguf(modelPath, {seed: 80, chatTemplate: template, userDefinedVocab: spec.vocab,
        ...(glm ? {controlVocab: ["[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>", "<|endoftext|>"]} : {})});
    await expectToolLoopsAsTemplate(modelPath, template, spec.format);
}, 60_000);

// Calls with no closing markup after their arguments (Mistral's, Mistral Small 3.2 with a call id; Llama 3.1's).
it.each(jsonEndedTemplates)("a tool loop's whole prompt is the template's rendering: %s", async (file) => {
    const template = fs.readFileSync(path.join(realTemplatesDir, file), "utf8");
    const modelPath = path.join(testModelsDir, `mistral-template-${file}.gguf`);
    fs.mkdirSync(testModelsDir, {recursive: true});
    await makeTestLlamaGguf(modelPath, {seed: 81, chatTemplate: template, contextLength: 8192, controlVocab: ["[INST]", "[/INST]", "[SYSTEM_PROMPT]",
        "[/SYSTEM_PROMPT]", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CONTENT]",
        "<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>"]});
    await expectToolLoopsAsTemplate(modelPath, template, null);
}, 60_000);

// LFM2's family (Liquid AI): calls as a Python list (pythonCalls.ts). LFM2.5-8B-A1B's template writes past calls itself;
// LFM2's and LFM2.5-Instruct's leave a message's calls out (their models' calls are part of the message's text there), so
// the reference is the template's rendering of the messages with the calls in their text, as LFM2.5's template writes them.
const lfm2Templates = [
    {file: "LFM2.5-8B-A1B.jinja", callsInText: false, format: "think-tags" as const},
    {file: "LFM2-8B-A1B.jinja", callsInText: true, format: null},
    {file: "LFM2.5-Instruct.jinja", callsInText: true, format: "think-tags" as const}
];
it.each(lfm2Templates)("a tool loop's whole prompt is the template's rendering, calls as a Python list: $file", async (spec) => {
    const template = fs.readFileSync(path.join(realTemplatesDir, spec.file), "utf8");
    const modelPath = path.join(testModelsDir, `lfm2-template-${spec.file}.gguf`);
    fs.mkdirSync(testModelsDir, {recursive: true});
    await makeTestLlamaGguf(modelPath, {seed: 82, chatTemplate: template, userDefinedVocab: ["<think>", "</think>"], controlVocab: ["<|im_start|>",
        "<|tool_call_start|>", "<|tool_call_end|>", "<|tool_list_start|>", "<|tool_list_end|>", "<|tool_response_start|>", "<|tool_response_end|>"]});
    await expectToolLoopsAsTemplate(modelPath, template, spec.format, spec.callsInText ? pythonCallsText : undefined);
}, 60_000);

// Calls as a JSON list between two markers (jsonListCalls.ts): Nemotron-Nano-v2's `<TOOLCALL>[...]</TOOLCALL>`, Apriel's
// `<tool_calls>[...]</tool_calls>` (with the calls' ids, the prompt's own numbered ones); their templates write past calls.
const jsonListTemplates = [
    {file: "NVIDIA-Nemotron-Nano-v2.jinja", format: "think-tags" as const, vocab: ["<TOOLCALL>", "</TOOLCALL>", "<SPECIAL_10>", "<SPECIAL_11>", "<SPECIAL_12>"]},
    {file: "unsloth-Apriel-1.5.jinja", format: null, vocab: ["<tool_calls>", "</tool_calls>"]},
    {file: "Apriel-1.6-15b-Thinker-fixed.jinja", format: "apriel" as const, vocab: ["<tool_calls>", "</tool_calls>"]}
];
it.each(jsonListTemplates)("a tool loop's whole prompt is the template's rendering, calls as a JSON list: $file", async (spec) => {
    const template = fs.readFileSync(path.join(realTemplatesDir, spec.file), "utf8");
    const modelPath = path.join(testModelsDir, `json-list-template-${spec.file}.gguf`);
    fs.mkdirSync(testModelsDir, {recursive: true});
    await makeTestLlamaGguf(modelPath, {seed: 83, chatTemplate: template, contextLength: 8192, userDefinedVocab: ["<think>", "</think>"], controlVocab: spec.vocab});
    await expectToolLoopsAsTemplate(modelPath, template, spec.format);
}, 60_000);

// Kimi-K2's calls in one section, `<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|>`
// (kimiCalls.ts): moonshotai's template names each result by its call's id, which the prompt gives as the model writes it.
// K2-Thinking keeps the reasoning of the current turn's calls only after the last assistant message without calls: the
// reply to come goes to it as the generation prompt, not as such a message (replyRender), so that reasoning is kept.
const kimiTemplates = ["moonshotai-Kimi-K2.jinja", "Kimi-K2-Instruct.jinja", "Kimi-K2-Thinking.jinja"];
it.each(kimiTemplates)("a tool loop's whole prompt is the template's rendering, Kimi-K2's calls: %s", async (file) => {
    const template = fs.readFileSync(path.join(realTemplatesDir, file), "utf8");
    const modelPath = path.join(testModelsDir, `kimi-template-${file}.gguf`);
    fs.mkdirSync(testModelsDir, {recursive: true});
    await makeTestLlamaGguf(modelPath, {seed: 84, chatTemplate: template, contextLength: 8192, userDefinedVocab: ["<think>", "</think>"],
        controlVocab: ["<|im_system|>", "<|im_user|>", "<|im_assistant|>", "<|im_middle|>", "<|im_end|>", "<|tool_calls_section_begin|>",
            "<|tool_calls_section_end|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"]});
    const thinking = file === "Kimi-K2-Thinking.jinja";
    await expectToolLoopsAsTemplate(modelPath, template, thinking ? "think-tags" : null, undefined, (name, index) => `functions.${name}:${index}`);
}, 60_000);

/** `callsText`: the template leaves calls out; the reference messages carry them in their text, written by this. */
async function expectToolLoopsAsTemplate(modelPath: string, template: string, format: ReasoningFormat | null,
    callsText?: (calls: {name: string, arguments: unknown}[]) => string, callIds?: (name: string, index: number) => string) {
    const llama = await loadLlamaRuntime({gpu: "off"});
    const model = await llama.loadModel({modelPath});
    const renderer = new ChatPromptRenderer(model);
    const pieces = model.fileInfo.metadata.tokenizer!.ggml!.tokens as readonly string[];
    const [bos, eos] = [pieces[model.tokens.bos!], pieces[model.tokens.eos!]];
    const call = (city: string, args: Record<string, unknown> = {city}) => ({name: "get_weather", arguments: args, result: "sunny in " + city});
    const cases: [string, ChatTurn[]][] = [
        ["tool loop (open response)", [
            {role: "user", content: "Weather in Paris?"},
            {role: "assistant", content: "", toolCalls: [{name: "get_weather", arguments: {city: "Paris"}, result: "sunny"}]}
        ]],
        ["tool loop with text", [
            {role: "user", content: "Weather in Paris?"},
            {role: "assistant", content: "Let me check.", toolCalls: [{name: "get_weather", arguments: {city: "Paris"}, result: "sunny"}]}
        ]],
        ["tool then answer then user", [
            {role: "user", content: "Weather in Paris?"},
            {role: "assistant", content: "", toolCalls: [{name: "get_weather", arguments: {city: "Paris"}, result: "sunny"}]},
            {role: "assistant", content: "It is sunny."},
            {role: "user", content: "Thanks"}
        ]],
        ["tool results then a user message (no answer between)", [
            {role: "user", content: "Weather in Paris?"},
            {role: "assistant", content: "", toolCalls: [{name: "get_weather", arguments: {city: "Paris"}, result: "sunny"}]},
            {role: "user", content: "And Rome?"}
        ]],
        ["text and a call, its results, then a user message", [
            {role: "user", content: "Weather in Paris?"},
            {role: "assistant", content: "Let me check.", toolCalls: [{name: "get_weather", arguments: {city: "Paris"}, result: "sunny"}]},
            {role: "user", content: "And Rome?"}
        ]],
        ["plain history", [
            {role: "user", content: "Hi"}, {role: "assistant", content: "Hello!"}, {role: "user", content: "And?"}
        ]],
        ["two calls in one response (current turn)", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "", toolCalls: [call("Paris"), call("Rome")]}
        ]],
        ["two call steps (current turn)", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "", toolCalls: [call("Paris")]},
            {role: "assistant", content: "", toolCalls: [call("Rome")]}
        ]],
        ["text+call then call only (current turn)", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "Let me check.", toolCalls: [call("Paris")]},
            {role: "assistant", content: "", toolCalls: [call("Rome")]}
        ]],
        ["call only then text+call (current turn)", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "", toolCalls: [call("Paris")]},
            {role: "assistant", content: "And Rome.", toolCalls: [call("Rome")]}
        ]],
        ["past text+call turn, then user", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "Let me check.", toolCalls: [call("Paris")]},
            {role: "assistant", content: "It is sunny."},
            {role: "user", content: "Thanks"}
        ]],
        ["non-string arguments", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "", toolCalls: [call("Paris", {city: "Paris", days: 3, opts: {unit: "c"}, tags: ["a", "b"]})]}
        ]],
        ["a result with quotes and lines", [
            {role: "user", content: "Read it"},
            {role: "assistant", content: "", toolCalls: [{name: "get_weather", arguments: {city: "Paris"}, result: 'line "one"\n\tline two\\'}]}
        ]],
        ["a call with the reasoning sent back for it (current turn)", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "", reasoning: "The user wants the weather.", toolCalls: [call("Paris")]}
        ]],
        ["two call steps, each with its reasoning (current turn)", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "", reasoning: "First Paris.", toolCalls: [call("Paris")]},
            {role: "assistant", content: "", reasoning: "Now Rome.", toolCalls: [call("Rome")]}
        ]],
        ["text+call with reasoning (current turn)", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "Let me check.", reasoning: "The user wants the weather.", toolCalls: [call("Paris")]}
        ]],
        ["past call turn with reasoning, answer, then user", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "", reasoning: "Old thought.", toolCalls: [call("Paris")]},
            {role: "assistant", content: "It is sunny."},
            {role: "user", content: "Thanks"}
        ]],
        ["reasoning with surrounding newlines", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "", reasoning: "\nThe user wants the weather.\n\n", toolCalls: [call("Paris")]}
        ]],
        ["reasoning with control-token text and surrounding newlines", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "", reasoning: "\nEnd with <|im_end|> or <|endoftext|> or <|end|>, <|eot_id|>, <turn|>.\n", toolCalls: [call("Paris")]}
        ]],
        ["two calls in one response with reasoning, second step without", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "", reasoning: "Both.", toolCalls: [call("Paris"), call("Rome")]},
            {role: "assistant", content: "", toolCalls: [call("Berlin")]}
        ]],
        ["two text+call steps, each with its reasoning (current turn)", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "Paris first.", reasoning: "First Paris.", toolCalls: [call("Paris")]},
            {role: "assistant", content: "Now Rome.", reasoning: "Now Rome.\n", toolCalls: [call("Rome")]}
        ]],
        ["text+call with reasoning ending in newlines (current turn)", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "Let me check.", reasoning: "\nThe user wants the weather <|im_end|>.\n\n", toolCalls: [call("Paris")]}
        ]],
        ["empty arguments", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "", toolCalls: [call("Paris", {})]}
        ]],
        ["a past answer with the reasoning sent back for it, then user", [
            {role: "user", content: "Hi"}, {role: "assistant", content: "Hello!", reasoning: "Greet back."}, {role: "user", content: "And?"}
        ]],
        ["a tool loop's answer with its reasoning, then user", [
            {role: "user", content: "Weather?"},
            {role: "assistant", content: "", reasoning: "Check it.", toolCalls: [call("Paris")]},
            {role: "assistant", content: "It is sunny.", reasoning: "Say it."},
            {role: "user", content: "Thanks"}
        ]],
        ["system + plain past, current text answer then user", [
            {role: "system", content: "Be brief."}, {role: "user", content: "Hi"}, {role: "assistant", content: "Hello!"}, {role: "user", content: "And?"}
        ]]
    ];
    const failures: string[] = [];
    for (const [name, turns] of cases) {
        // As the server renders: thinking on (the model's default where the template has a switch; Gemma 4's is off by
        // default in the template), BOS and EOS as the vocabulary spells them.
        let reference: string;
        try {
            const messages = openAiMessages(turns, format === "harmony", callIds).map((message) => withCallsInText(message as OpenAiMessage, callsText));
            reference = new Template(template).render({messages, tools: functions.map((fn) => ({type: "function", function: fn})), add_generation_prompt: true,
                enable_thinking: true, bos_token: bos, eos_token: eos});
        } catch (error) {
            // A shape the template refuses (Mistral Small 3.2: a user message right after tool results): refused with its words.
            expect(() => conversationPrompt(renderer, format, job(turns), functions, false), name).toThrow(new TemplateRefusedError((error as Error).message));
            continue;
        }
        const prompt = conversationPrompt(renderer, format, job(turns), functions, false);
        const text = promptText(model, prompt.rendered) + prompt.tail;
        if (text !== reference) {
            const at = [...text].findIndex((char, index) => char !== reference[index]);
            failures.push(`${name}: differs at ${at}:\n${text.slice(Math.max(0, at - 200), at + 300)}\n--- the template's:\n${reference.slice(Math.max(0, at - 200), at + 300)}`);
        }
    }
    await model.dispose();
    expect(failures).toEqual([]);
}

type OpenAiMessage = {role: string, content?: string, tool_calls?: {function: {name: string, arguments: unknown}}[]};

/** An assistant message with its calls written after its text by `callsText` (none: as it is). */
function withCallsInText(message: OpenAiMessage, callsText: ((calls: {name: string, arguments: unknown}[]) => string) | undefined): OpenAiMessage {
    if (callsText == null || message.tool_calls == null)
        return message;
    return {...message, content: (message.content ?? "") + callsText(message.tool_calls.map((call) => call.function))};
}
