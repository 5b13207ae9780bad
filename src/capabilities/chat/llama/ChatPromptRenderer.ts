import crypto from "node:crypto";
import {
    JinjaTemplateChatWrapper, LlamaText, SpecialTokensText,
    type LlamaModel, type Token, type Tokenizer
} from "node-llama-cpp";
import type { ChatToolFunction, ChatTurn, ToolCallFormat } from "../ChatEngine.js";
import { chunkedTokenizer } from "./chunkedTokenizer.js";
import { ControlTextEscape, type EscapeSlots } from "./ControlTextEscape.js";
import { SpecialTokenTexts } from "./SpecialTokenTexts.js";
import { withGenerationPrompt } from "./templateGenerationPrompt.js";
import { jinjaRendererOf, keepFunctionResultsAsText, keepFunctionResultsRaw, keepHistoryResponsesAsGiven, keepTemplateThoughtBlocks,
    renderCallArgumentsUnwrapped, renderCallsThroughTemplate } from "../../../runtimes/llama/internals.js";
import { deriveCallBlock, deriveJsonKeyEnd, deriveParameterMarkup, parameterProbe, probeNumber } from "./parameterMarkup.js";
import { emptyTailsOf, rendersCalls } from "./templateMessages.js";
import { type RenderWatch, templateRefusalOf, watchRenders } from "./templateRenderWatch.js";
import { dropsTextBeforeCalls, effortValuesOf, encodesToolResults, toolCallFormatOf, writesCallIds, writesCalls } from "./templateProbes.js";
import { joinAdjacentTurns, makesCalls, toChatHistory, toModelFunctions, withoutDroppedAnalysis } from "./templateTurns.js";
import { TemplateRefusedError } from "../errors/TemplateRefusedError.js";
import { isHarmonyTemplate } from "./text/harmonyCalls.js";
import { mistralCallId } from "./mistralCalls.js";
import { kimiCallFormat, kimiCallId } from "./kimiCalls.js";
import { pythonCallsText } from "./pythonCalls.js";
import { derivesArgumentMarkup, knownCallFormat } from "./knownCallFormats.js";
import { detectReasoningFormat } from "./detectReasoningFormat.js";

/** Wrappers kept for distinct `chat_template_kwargs` (each is built by rendering the template a few times). */
const maxKwargsWrappers = 8;

/** How a conversation is rendered: the template's extra variables, and text written after the generation prompt. */
export type RenderOptions = {templateKwargs?: Record<string, unknown> | null, tail?: string};

/**
 * Renders a conversation into prompt tokens.
 *
 * With a chat template in the GGUF (`tokenizer.chat_template`) the template is rendered by
 * node-llama-cpp's Jinja wrapper exactly as written: messages are not merged, and message text is
 * always tokenized as plain text, so a user cannot inject control tokens such as `<|im_start|>`; nor through
 * tool descriptions, parameters, tool-call arguments or `chat_template_kwargs` (ControlTextEscape).
 * Template text is tokenized in pieces (chunkedTokenizer), which keeps long conversations linear.
 * The prompt ends with the template's own generation prompt (`add_generation_prompt`, with the
 * request's `enable_thinking`), which the wrapper does not render (templateGenerationPrompt).
 *
 * Tools: when node-llama-cpp recognises the template's tool-call format (Qwen2.5/Hermes-style
 * templates that render `tools`, assistant `tool_calls` and `tool` messages), the functions go to
 * the template as its `tools`, earlier calls as the assistant's `tool_calls` and their results as
 * `tool` messages, all rendered by the template itself. `toolCallFormat` is that format (null when
 * the template has no tool support).
 *
 * Without a template (base models such as stories260K) the documented fallback is plain text:
 * the message contents in order, separated by a blank line, after BOS, with no role labels, so
 * such a model simply continues the text it was given.
 */
export class ChatPromptRenderer {
    private readonly wrapper: JinjaTemplateChatWrapper | null;
    /** Wrappers by a hash of their `chat_template_kwargs`, with the kwargs' escaped text. */
    private readonly kwargsWrappers = new Map<string, {wrapper: JinjaTemplateChatWrapper, slots: EscapeSlots}>();
    private readonly watches = new WeakMap<JinjaTemplateChatWrapper, RenderWatch>();
    private readonly escaper: ControlTextEscape;
    /** The model's tokenizer, long text with special tokens in pieces (chunkedTokenizer): also /v1/tokenize's (textTokens). */
    readonly tokenizer: Tokenizer;
    readonly usesTemplate: boolean;
    /** A harmony template (gpt-oss's): its calls are read in harmonyCalls.ts's format, and the reply is rendered as its generation prompt. */
    private readonly harmony: boolean;
    /** A call format node-llama-cpp does not detect, known here (gpt-oss's, Gemma 4's, LFM2's, JSON lists'); null for others. */
    private readonly ownCallFormat: ToolCallFormat | null;
    /**
     * The template does not write a message's calls (LFM2's, LFM2.5-Instruct's): they go into the message's text in the
     * model's format (pythonCallsText); decided once, by the first wrapper.
     */
    private callsInText: boolean | undefined;
    /** The template writes call ids (Apriel's, Mistral Small 3.2's, Kimi-K2's): they are the prompt's own, numbered; decided by the first wrapper. */
    private callIds: ((name: string, index: number) => string) | null | undefined;
    /** The template leaves out the text of a message with calls (Mistral Small 3.2's): so does the prompt (node-llama-cpp would fall back to its own format). */
    private readonly dropsCallText: boolean;
    /** The template writes a tool's result as a JSON string (gpt-oss's `content|tojson`). */
    private readonly resultsInJson: boolean;
    /** Whether messages of one role in a row are joined before the template renders them (createWrapper). */
    private joinsAdjacentMessages: boolean | undefined;
    /**
     * The template writes a call's arguments one by one in markup (parameterMarkup.ts): node-llama-cpp wrapped them in a
     * map, and createWrapper hands them over as they are; undefined until the first wrapper tells, false when the
     * template's renderings did not show the markup (node-llama-cpp's format is kept then).
     */
    private argumentsInMarkup: boolean | undefined;
    /** Puts node-llama-cpp's wrapping of the first wrapper's arguments back (markupFormat found no markup). */
    private undoUnwrapped: (() => void) | null = null;
    /** A top-level null argument goes to the template as this text (Qwen3-Coder's `| string` fails on null; Python writes `None`). */
    private nullArgument: string | null = null;
    /** How the model writes a call (null: its template has no tool support); in the constructor, the probe renders with the detected one. */
    readonly toolCallFormat: ToolCallFormat | null;
    /** The template has a thinking switch (Qwen3's `enable_thinking`). */
    readonly hasThinkingSwitch: boolean;
    /** The template reads a reasoning effort (gpt-oss's `reasoning_effort`: low, medium, high). */
    readonly hasEffortVariable: boolean;
    /**
     * The efforts the template takes, where it refuses others (`reasoning_effort not in [...]`: mistral-common's v15
     * templates `none`/`high`, Tencent Hy3's `no_think`/`low`/`high`); null where it names none (gpt-oss's).
     */
    readonly effortValues: readonly string[] | null;
    /** The template reads the thought's budget in tokens (Seed-OSS's `thinking_budget`). */
    readonly hasBudgetVariable: boolean;

    /** `checkpoint`: called between the pieces of long template text (chunkedTokenizer); throws to stop a render. */
    constructor(private readonly model: LlamaModel, {checkpoint}: {checkpoint?: () => void} = {}) {
        const specials = SpecialTokenTexts.of(model);
        this.escaper = new ControlTextEscape(specials);
        this.tokenizer = chunkedTokenizer(model, specials, checkpoint);
        const template = model.fileInfo.metadata.tokenizer?.chat_template;
        this.harmony = typeof template === "string" && isHarmonyTemplate(template);
        this.ownCallFormat = typeof template === "string" ? knownCallFormat(template) : null;
        this.wrapper = typeof template === "string" && template.trim() !== "" ? this.createWrapper(template, undefined) : null;
        this.usesTemplate = this.wrapper != null;
        this.toolCallFormat = this.wrapper?.usingJinjaFunctionCallTemplate !== true ? null : this.ownCallFormat ?? toolCallFormatOf(this.wrapper);
        if (this.toolCallFormat != null && this.argumentsInMarkup === true)
            this.toolCallFormat = this.markupFormat(this.toolCallFormat);
        this.resultsInJson = this.wrapper != null && this.toolCallFormat != null && encodesToolResults(this.watches.get(this.wrapper)!.render);
        this.dropsCallText = this.wrapper != null && this.toolCallFormat != null && dropsTextBeforeCalls(this.watches.get(this.wrapper)!.render);
        this.hasThinkingSwitch = typeof template === "string" && template.includes("enable_thinking");
        this.hasEffortVariable = typeof template === "string" && template.includes("reasoning_effort");
        this.effortValues = typeof template === "string" ? effortValuesOf(template) : null;
        this.hasBudgetVariable = typeof template === "string" && template.includes("thinking_budget");
    }

    /**
     * `enable_thinking` goes to the wrapper's own switch (it would otherwise write its default over the variable).
     * Messages of one role in a row go to the template as they are, unless the template refuses them (Gemma's and
     * Mistral's raise "roles must alternate", so node-llama-cpp's check of the template fails and the model would not
     * load): then they are joined into one message, as such a template needs; decided once, by the first wrapper.
     */
    private createWrapper(template: string, kwargs: Record<string, unknown> | undefined) {
        const {enable_thinking: enableThinking, ...additionalRenderParameters} = kwargs ?? {};
        const build = (joinAdjacentMessagesOfTheSameType: boolean) => new JinjaTemplateChatWrapper({
            reasoning: typeof enableThinking === "boolean" ? enableThinking : true,
            template,
            tokenizer: this.model.tokenizer,
            joinAdjacentMessagesOfTheSameType,
            convertUnsupportedSystemMessagesToUserMessages: "auto",
            additionalRenderParameters: Object.keys(additionalRenderParameters).length === 0 ? undefined : additionalRenderParameters
        });
        let wrapper: JinjaTemplateChatWrapper;
        if (this.joinsAdjacentMessages == null) {
            try {
                wrapper = build(false);
                this.joinsAdjacentMessages = false;
            } catch (error) {
                try {
                    wrapper = build(true);
                } catch {
                    throw error;
                }
                this.joinsAdjacentMessages = true;
            }
        } else
            wrapper = build(this.joinsAdjacentMessages);
        keepHistoryResponsesAsGiven(wrapper);
        keepTemplateThoughtBlocks(wrapper);
        // gpt-oss's, Gemma 4's and LFM2's calls are read in their own formats (harmonyCalls.ts, gemma4Arguments.ts,
        // pythonCalls.ts), which node-llama-cpp's detection does not know.
        if (!wrapper.usingJinjaFunctionCallTemplate && this.ownCallFormat != null)
            renderCallsThroughTemplate(wrapper, {call: {...this.ownCallFormat, optionalPrefixSpace: true, emptyCallParamsPlaceholder: {}}, result: {prefix: "", suffix: ""}});
        const renderer = jinjaRendererOf(wrapper);
        const render = renderer.render.bind(renderer);
        this.callsInText ??= this.ownCallFormat?.notation === "python" && !writesCalls(render);
        if (wrapper.usingJinjaFunctionCallTemplate) {
            // OpenAI tool results are strings and go into the template as they are; node-llama-cpp
            // would JSON-encode them again (`"sunny"` instead of `sunny`).
            keepFunctionResultsAsText(wrapper);
            keepFunctionResultsRaw(wrapper);
            // A template that writes each argument in markup gets a past call's arguments as they are (parameterMarkup.ts),
            // and so does a template whose call format is known here (LFM2.5's iterates them: node-llama-cpp wraps them in `params`).
            if (this.ownCallFormat != null) {
                renderCallArgumentsUnwrapped(wrapper);
                if (derivesArgumentMarkup(this.ownCallFormat))
                    this.argumentsInMarkup ??= true;
            } else if (this.argumentsInMarkup !== false) {
                const undo = renderCallArgumentsUnwrapped(wrapper);
                this.argumentsInMarkup ??= undo != null;
                if (undo != null)
                    this.undoUnwrapped = undo;
            }
        }
        // A template that writes call ids gets the prompt's own, numbered (withNumberedCallIds): Mistral Small 3.2's takes no
        // other; Kimi-K2's are its model's `functions.NAME:IDX`.
        this.callIds ??= this.ownCallFormat === kimiCallFormat ? kimiCallId
            : this.ownCallFormat?.idMarker != null || writesCallIds(render) ? mistralCallId : null;
        this.watches.set(wrapper, watchRenders(wrapper, {callIds: this.callIds, callsText: this.callsInText ? pythonCallsText : null,
            reasoningAs: this.ownCallFormat?.notation === "python" ? "thinking" : detectReasoningFormat(this.model) === "mistral" ? "blocks" : null,
            toolNames: this.ownCallFormat !== kimiCallFormat}));
        return wrapper;
    }

    /**
     * The call format of a template that writes arguments in markup (parameterMarkup.ts), read from its renderings of a
     * probe call with two string arguments and with none; node-llama-cpp's own (`detected`) when they do not have that shape.
     */
    private markupFormat(detected: ToolCallFormat): ToolCallFormat {
        const {name, keys, values} = parameterProbe;
        const render = (args: Record<string, unknown>) => textOf(this.renderTemplate(
            [{role: "user", content: "probe"}, {role: "assistant", content: "", toolCalls: [{name, arguments: args, result: "probe"}]}],
            [{name, parameters: {type: "object", properties: Object.fromEntries(keys.map((key) => [key, {type: "string"}]))}}]));
        const two = render({[keys[0]]: values[0], [keys[1]]: values[1]});
        const derived = deriveParameterMarkup(two, render({}), detected.prefix, detected.suffix);
        if (derived == null) {
            // Not the shape looked for: node-llama-cpp's own format, as before (its calls are not read, but a request with tools is served).
            this.argumentsInMarkup = false;
            this.undoUnwrapped?.();
            return detected;
        }
        // A null argument: where the template fails on it (node-llama-cpp then falls back to its own format, silently),
        // it goes in as Python's `None`, as Python's Jinja writes it.
        const callStart = detected.prefix + name + derived.nameEnd + derived.markup.keyStart + keys[0];
        if (!render({[keys[0]]: null}).includes(callStart) && render({[keys[0]]: "None"}).includes(callStart))
            this.nullArgument = "None";
        // A value that is not a string after another key end (DeepSeek-V3.2's ` string="false">`): read as JSON.
        const jsonKeyEnd = deriveJsonKeyEnd(render({[keys[0]]: probeNumber, [keys[1]]: values[1]}), derived.markup);
        const format = {...detected, paramsPrefix: derived.nameEnd, suffix: derived.callEnd, parameters: jsonKeyEnd == null ? derived.markup : {...derived.markup, jsonKeyEnd}};
        const block = deriveCallBlock(two, detected.prefix, derived.callEnd);
        if (block != null)
            return {...format, prefix: block.opener + detected.prefix, list: {separator: "", item: detected.prefix, end: block.end}};
        // A prefix of two tags (Qwen3-Coder's `<tool_call>\n<function=`): the first call may come without the first, as
        // llama.cpp reads Qwen3-Coder's (a template without thinking; Qwen3.5's, Nemotron-3's and Seed-OSS's have it: not theirs).
        const inner = /^<[^<>\s]+>\s*(<\S.*)$/s.exec(detected.prefix)?.[1];
        return inner == null || this.wrapper?.template.includes("think>") ? format : {...format, firstStart: inner};
    }

    /** A call's arguments with each top-level null as `nullArgument` says. */
    private withNullArguments(args: unknown): unknown {
        if (this.nullArgument == null || args == null || typeof args !== "object" || Array.isArray(args))
            return args;
        return Object.fromEntries(Object.entries(args).map(([key, value]) => [key, value === null ? this.nullArgument : value]));
    }

    /** The wrapper that renders with these template variables (the plain one without any), and the kwargs' escaped text. */
    private wrapperFor(kwargs: Record<string, unknown> | null | undefined): {wrapper: JinjaTemplateChatWrapper, slots: EscapeSlots} | null {
        if (this.wrapper == null || kwargs == null || Object.keys(kwargs).length === 0)
            return this.wrapper == null ? null : {wrapper: this.wrapper, slots: new Map()};
        const key = crypto.createHash("sha256").update(JSON.stringify(kwargs)).digest("base64url");
        let built = this.kwargsWrappers.get(key);
        if (built == null) {
            const slots: EscapeSlots = new Map();
            built = {wrapper: this.createWrapper(this.wrapper.template, this.escaper.escape(kwargs, slots)), slots};
            if (this.kwargsWrappers.size >= maxKwargsWrappers)
                this.kwargsWrappers.delete(this.kwargsWrappers.keys().next().value!);
        } else
            this.kwargsWrappers.delete(key);
        this.kwargsWrappers.set(key, built);
        return built;
    }

    /** Whether rendering with these template variables needs no new wrapper (building one renders the template about 15 times). */
    hasWrapperFor(kwargs: Record<string, unknown> | null | undefined): boolean {
        return this.wrapper == null || kwargs == null || Object.keys(kwargs).length === 0
            || this.kwargsWrappers.has(crypto.createHash("sha256").update(JSON.stringify(kwargs)).digest("base64url"));
    }

    render(turns: readonly ChatTurn[], functions?: readonly ChatToolFunction[], options: RenderOptions = {}): Token[] {
        return this.tokensOf(this.renderTemplate(turns, functions, options.templateKwargs), turns, options.tail);
    }

    /** The prompt tokens of a rendered conversation (`renderTemplate`'s result) with `tail` written after it. */
    tokensOf(rendered: LlamaText | null, turns: readonly ChatTurn[], tail?: string): Token[] {
        const text = rendered == null || tail == null || tail === "" ? rendered : LlamaText([rendered, new SpecialTokensText(tail)]);
        // Plain text is tokenized as llama.cpp tokenizes a prompt (SentencePiece space prefix included).
        const tokens = text?.tokenize(this.tokenizer)
            ?? this.model.tokenize(turns.map((turn) => turn.content).join("\n\n"));
        // Like llama.cpp: BOS goes first when the model asks for it and the template did not write it.
        const bos = this.model.tokens.bos;
        if (bos != null && this.model.tokens.shouldPrependBosToken && tokens[0] !== bos)
            tokens.unshift(bos);
        return tokens;
    }

    /**
     * The conversation as the template renders it (special tokens marked as such); null without a template. A template
     * that raises on the conversation's shape (Mistral's and Ministral's "roles must alternate" on two system or user
     * messages in a row, as Codex sends them) gets such messages joined, as transformers' users do; if it still
     * raises, a TemplateRefusedError with its message.
     */
    renderTemplate(given: readonly ChatTurn[], functions?: readonly ChatToolFunction[], templateKwargs?: Record<string, unknown> | null): LlamaText | null {
        // An answer of whitespace last is no answer's start (conversationPrompt continues only text): the reply to come.
        const last = given.at(-1);
        const turns = last?.role === "assistant" && !makesCalls(last) && last.content !== "" && last.content.trim() === "" ? given.slice(0, -1) : given;
        let built: ReturnType<ChatPromptRenderer["wrapperFor"]>;
        try {
            built = this.wrapperFor(templateKwargs);
        } catch (error) {
            // Building the kwargs' wrapper renders the template (node-llama-cpp's sanity test, which rewraps the error):
            // a template that raises on these variables (Kimi-K3's unknown thinking_effort) refuses them.
            throw this.kwargsRefusal(templateKwargs) ?? error;
        }
        if (built == null)
            return null;
        const watch = this.watches.get(built.wrapper)!;
        try {
            return this.renderWith(built, turns, functions);
        } catch (error) {
            if (watch.refusal == null)
                throw error;
            const joined = joinAdjacentTurns(turns);
            if (joined.length !== turns.length) {
                try {
                    return this.renderWith(built, joined, functions);
                } catch (retried) {
                    if (watch.refusal == null)
                        throw retried;
                }
            }
            throw new TemplateRefusedError(watch.refusal);
        }
    }

    /** The template's own refusal of these variables on a plain conversation (its raise_exception), if it raises one. */
    private kwargsRefusal(kwargs: Record<string, unknown> | null | undefined): TemplateRefusedError | null {
        if (this.wrapper == null || kwargs == null)
            return null;
        try {
            this.watches.get(this.wrapper)!.render({messages: [{role: "user", content: "Hi"}], add_generation_prompt: true, bos_token: "", eos_token: "", ...kwargs});
        } catch (error) {
            const refusal = templateRefusalOf(error);
            if (refusal != null)
                return new TemplateRefusedError(refusal, "chat_template_kwargs");
        }
        return null;
    }

    /**
     * Text the template may trim (a reasoning: Qwen3's `strip('\\n')`, GLM's `strip()`, Qwen3.5's `|trim`) escaped with its
     * leading and trailing whitespace left outside the placeholder, so the template trims it as it would the text itself.
     */
    private escapeTrimmable(text: string, slots: EscapeSlots): string {
        const core = text.trim();
        const escaped = this.escaper.escape(core, slots);
        if (escaped === core)
            return text;
        const start = text.indexOf(core);
        return text.slice(0, start) + escaped + text.slice(start + core.length);
    }

    private renderWith(built: {wrapper: JinjaTemplateChatWrapper, slots: EscapeSlots}, turns: readonly ChatTurn[], functions?: readonly ChatToolFunction[]): LlamaText {
        // Tool text and call arguments go in escaped (kept plain text), as the kwargs did when their wrapper was built.
        const slots: EscapeSlots = new Map();
        const escapedTurns = turns.map((turn) => turn.toolCalls == null ? turn : {
            ...turn, toolCalls: turn.toolCalls.map((call) => ({
                ...call, name: this.escaper.escape(call.name, slots), arguments: this.escaper.escape(this.withNullArguments(call.arguments), slots),
                // The placeholder the template encodes stands for the result's text: encoded as the template would.
                ...(this.resultsInJson && typeof call.result === "string" ? {result: JSON.stringify(call.result).slice(1, -1)} : {})
            }))
        });
        const shown = this.dropsCallText ? escapedTurns.map((turn) => makesCalls(turn) && turn.content !== "" ? {...turn, content: ""} : turn) : escapedTurns;
        const {history, newTurn} = toChatHistory(this.harmony ? withoutDroppedAnalysis(shown) : shown);
        const watch = this.watches.get(built.wrapper)!;
        watch.last = null;
        watch.refusal = null;
        // The reply to come goes to the template as its generation prompt, not as a message (replyRender); not where the
        // conversation ends with an answer's start (a prefill): node-llama-cpp makes it the reply's text.
        const last = turns.at(-1);
        watch.replyAsGenerationPrompt = !(last?.role === "assistant" && last.content !== "" && !makesCalls(last));
        watch.emptyTails = emptyTailsOf(history);
        const reasoningOf = (turn: ChatTurn) => turn.reasoning == null || turn.reasoning === "" ? null : this.escapeTrimmable(turn.reasoning, slots);
        watch.callReasoning = shown.filter((turn) => turn.role === "assistant" && makesCalls(turn)).map(reasoningOf);
        watch.answerReasoning = shown.filter((turn) => turn.role === "assistant" && !makesCalls(turn)).map(reasoningOf);
        const given = functions == null || functions.length === 0 || this.toolCallFormat == null ? undefined : this.escaper.escape(functions, slots);
        const generate = (available: readonly ChatToolFunction[] | undefined) =>
            built.wrapper.generateContextState({chatHistory: history, availableFunctions: available == null ? undefined : toModelFunctions(available)}).contextText;
        let contextText: LlamaText;
        try {
            try {
                contextText = generate(given);
            } catch (error) {
                // A template that writes every tool's description (gpt-oss's `"// " + tool.description`) fails on a tool
                // without one: rendered with an empty one, as llama.cpp's Jinja joins a missing value to text.
                if (given == null || given.every((fn) => fn.description != null))
                    throw error;
                contextText = generate(given.map((fn) => fn.description == null ? {...fn, description: ""} : fn));
            }
        } finally {
            watch.replyAsGenerationPrompt = false;
            watch.emptyTails = [];
            watch.callReasoning = [];
            watch.answerReasoning = [];
        }
        // The wrapper's last render is the one its text comes from (generateContextState renders synchronously).
        const rendered = watch.last;
        // Where the template refused the calls as they are, node-llama-cpp falls back to writing them into the messages'
        // text in its own format (a prompt the model was not trained on): the template's refusal stands instead.
        if (watch.refusal != null && turns.some((turn) => makesCalls(turn)) && !rendersCalls(rendered))
            throw new Error(watch.refusal);
        const prompt = (rendered == null ? null : withGenerationPrompt(contextText, rendered, newTurn, watch.render)) ?? contextText;
        return this.escaper.restore(prompt, slots, built.slots);
    }
}

/** The text of a rendered prompt, special tokens other than text (BOS) left out. */
function textOf(text: LlamaText | null): string {
    return (text?.values ?? []).map((value) => typeof value === "string" ? value : value instanceof SpecialTokensText ? value.value : "").join("");
}
