import { LlamaGrammar, type Llama, type LlamaModel, type Token, type TokenBias } from "node-llama-cpp";
import type { ChatEngineInfo, ChatJob, ChatToolFunction, RawPrompt } from "../ChatEngine.js";
import { ContextLengthExceededError } from "../errors/ContextLengthExceededError.js";
import { EmptyPromptError } from "../errors/EmptyPromptError.js";
import { InvalidJsonSchemaError } from "../errors/InvalidJsonSchemaError.js";
import { TooManyChoicesError } from "../errors/TooManyChoicesError.js";
import type { ChatPromptRenderer } from "./ChatPromptRenderer.js";
import { createLogitBias, withEndOfGenerationBanned } from "./createLogitBias.js";
import type { ChoiceSettings } from "./generateChoice.js";
import type { ToolCallPlan } from "./ChoiceOutput.js";
import { createJsonSchemaGrammar } from "./jsonSchemaGrammar.js";
import { argumentsReader } from "./parseToolCalls.js";
import type { PreparedPrompt, PromptRequest } from "./preparePrompt.js";
import type { PromptTokenFloor } from "./PromptTokenFloor.js";
import { toolCallGrammarText } from "./toolCallGrammar.js";
import { tagsOf } from "./text/createReasoningSplitter.js";

const maxCachedSchemaGrammars = 32;
/** What ends a harmony model's analysis and opens its final answer. */
const harmonyFinalHeader = "<|end|><|start|>assistant<|channel|>final<|message|>";
/** What ends a harmony model's analysis message (besides an end of generation): where a forced call's opening goes instead. */
const harmonyMessageEnds = ["<|end|>", "<|start|>", "<|call|>", "<|return|>"];

/** A legacy completions prompt: the client's text or tokens as they are (no template, no reasoning split), maybe echoed back. */
export type RawTurnPrompt = {kind: "raw", tokens: Token[], rawPrompt: RawPrompt, clientStart: number};
/** A job's prompt tokens and what they were made from: a raw prompt, or a conversation (to a thinking model: its reasoning settings). */
export type TurnPrompt = RawTurnPrompt | {kind: "conversation", tokens: Token[], reasoning: ChoiceSettings["reasoning"]};

/** What every choice of a job shares, decided before the job waits for sequences. */
export type Turn = {
    prompt: TurnPrompt;
    /** Already clamped to what fits beside the prompt. */
    maxTokens: number;
    tokenBias: TokenBias | undefined;
    grammar: LlamaGrammar | undefined;
    calls: ToolCallPlan | null;
    /** The choices may draft (speculative decoding). */
    speculate: boolean;
};

/** A thinking model's reasoning settings; undefined for a raw prompt or a model that does not think. */
export function reasoningOf(prompt: TurnPrompt): ChoiceSettings["reasoning"] {
    return prompt.kind === "conversation" ? prompt.reasoning : undefined;
}

/** What the planner needs of its engine's model. */
export type TurnPlannerModel = {
    llama: Llama;
    model: LlamaModel;
    renderer: ChatPromptRenderer;
    info: Pick<ChatEngineInfo, "id" | "contextSize" | "reasoningFormat">;
    /** Sequences a job's choices may take at most. */
    capacity: number;
    tokenFloor: PromptTokenFloor;
    /** The grammar of `response_format: json_object`, compiled at load. */
    jsonGrammar: LlamaGrammar;
    /** The prompt's tokens (on the main thread or the render thread, which stops when `signal` aborts). */
    prepare(request: PromptRequest, signal?: AbortSignal): Promise<PreparedPrompt>;
};

/** What the prompt of `job` is made of (a raw prompt, or the conversation and what its rendering depends on). */
export function promptRequestOf(job: ChatJob, format: ChatEngineInfo["reasoningFormat"], functions: ChatToolFunction[] | undefined, constrained: boolean,
    callOpening?: string): PromptRequest {
    return job.rawPrompt != null
        ? {kind: "raw", rawPrompt: job.rawPrompt}
        : {
            kind: "conversation", format: format ?? null, functions, constrained, ...(callOpening == null ? {} : {callOpening}),
            job: {turns: job.turns, templateKwargs: job.templateKwargs, reasoning: job.reasoning}
        };
}

/**
 * A chat engine's turn planning: everything a job's choices share (prompt tokens, token budget, logit bias, grammar,
 * tool calls, reasoning split, whether to draft), decided before the job waits for sequences, so a request refused
 * here never queues. Keeps the compiled grammars of the schemas and forced tool calls clients send again and again.
 */
export class TurnPlanner {
    private readonly grammars = new Map<string, LlamaGrammar>();
    /** What the engine writes to end a thought over its budget (the model's format: `</think>`, or harmony's end of analysis and final header). */
    private readonly thinkCloseTokens: readonly Token[];
    private harmonyCallClosing: {closeTokens: readonly Token[], closeOn: ReadonlySet<Token>} | undefined;

    constructor(private readonly of: TurnPlannerModel) {
        // The markup alone (a SentencePiece vocabulary would put a space piece before each text around it); the model writes what follows.
        const format = of.info.reasoningFormat;
        this.thinkCloseTokens = this.tokensOf(format === "harmony" ? harmonyFinalHeader : tagsOf(format ?? "think-tags").close);
    }

    async plan(job: ChatJob, signal?: AbortSignal): Promise<Turn> {
        const {info, renderer, model} = this.of;
        if (job.n > this.of.capacity)
            throw new TooManyChoicesError(info.id, job.n, this.of.capacity);
        const tools = job.tools ?? null;
        const toolCallFormat = renderer.toolCallFormat;
        if (tools != null && tools.functions.length > 0 && toolCallFormat == null)
            throw new Error(`Model '${info.id}' has no tool support; the request should have been refused`);
        const contextSize = info.contextSize;
        // Refused before rendering and tokenizing when what it holds says it cannot fit.
        const floor = this.of.tokenFloor.of(job);
        if (floor >= contextSize)
            throw new ContextLengthExceededError(contextSize, floor, {atLeast: true});
        const forced = tools?.choice.type === "forced" ? tools.choice : null;
        const constrained = forced != null || job.jsonSchema != null || job.jsonObject;
        // A format whose forced call the prompt opens (harmony's: a call is a message of its own) needs its reasoning split.
        const callOpening = forced != null && info.reasoningFormat === "harmony" ? toolCallFormat?.forcedOpening : undefined;
        const prepared = await this.of.prepare(promptRequestOf(job, info.reasoningFormat, tools?.functions, constrained, callOpening), signal);
        if (prepared.tokens.length === 0)
            throw new EmptyPromptError();
        if (prepared.tokens.length >= contextSize)
            throw new ContextLengthExceededError(contextSize, prepared.tokens.length);

        const maxTokens = Math.min(job.maxTokens ?? Infinity, contextSize - prepared.tokens.length);
        const tokenBias = createLogitBias(model, job.sampling.ignoreEos ? withEndOfGenerationBanned(model, job.sampling.logitBias) : job.sampling.logitBias);
        const calls: ToolCallPlan | null = tools != null && tools.choice.type !== "none" && toolCallFormat != null
            ? {format: toolCallFormat, names: new Set(tools.functions.map((fn) => fn.name)), forced: forced != null, read: argumentsReader(toolCallFormat, tools.functions)}
            : null;
        const grammar = forced != null && calls != null
            ? this.cachedGrammar("tools:" + JSON.stringify(forced), () => callOpening == null
                ? toolCallGrammarText(this.of.llama, calls.format, forced.functions, forced.parallel)
                // The prompt wrote the call's opening, the model's end of generation is its end: one call, its name and arguments.
                : toolCallGrammarText(this.of.llama, {...calls.format, prefix: "", suffix: ""}, forced.functions, false))
            : job.jsonSchema != null ? this.schemaGrammar(job.jsonSchema) : job.jsonObject ? this.of.jsonGrammar : undefined;
        // A raw prompt (legacy completions) replaces the rendered conversation and is text as it is; a conversation
        // to a thinking model: where its output starts, its budget, the closing tag the engine writes.
        const reasoningFormat = info.reasoningFormat ?? null;
        // gpt-oss's forced call with thinking on: its analysis first, then the engine opens the call where the analysis ends.
        const closeInCall = callOpening != null && prepared.start !== "call" ? this.callClosing(callOpening) : null;
        const prompt: TurnPrompt = job.rawPrompt != null
            ? {kind: "raw", tokens: prepared.tokens, rawPrompt: job.rawPrompt, clientStart: prepared.clientStart}
            : {
                kind: "conversation", tokens: prepared.tokens, reasoning: reasoningFormat == null ? undefined : {
                    format: reasoningFormat, start: prepared.start, budgetTokens: job.reasoning?.budgetTokens ?? null, closeTokens: this.thinkCloseTokens,
                    ...closeInCall
                }
            };
        // Drafts are verified as the model's own picks, which holds unless a choice's sampling changes between a
        // draft's positions in ways node-llama-cpp cannot follow: penalties counted over the tokens generated so
        // far, and a grammar that starts only after a thinking model's thought.
        const speculate = job.sampling.frequencyPenalty === 0 && job.sampling.presencePenalty === 0 && !(reasoningOf(prompt) != null && grammar != null);
        return {prompt, maxTokens, tokenBias, grammar, calls, speculate};
    }

    /** How a harmony model's analysis ends in a forced call the engine opens (`callOpening`, constant per model): tokenized once. */
    private callClosing(callOpening: string) {
        return this.harmonyCallClosing ??= {
            closeTokens: this.tokensOf("<|end|><|start|>assistant" + callOpening),
            closeOn: new Set(harmonyMessageEnds.flatMap((end) => this.tokensOf(end)))
        };
    }

    /** Markup's tokens, as the model's vocabulary has them (control tokens as such). */
    private tokensOf(markup: string): Token[] {
        return this.of.model.tokenize(markup, true, "trimLeadingSpace");
    }

    /** Compiled once per distinct schema: clients tend to send the same few schemas again and again. */
    private schemaGrammar(schema: Record<string, unknown>) {
        return this.cachedGrammar(JSON.stringify(schema), () => createJsonSchemaGrammar(this.of.llama, schema));
    }

    private cachedGrammar(key: string, create: () => LlamaGrammar | string) {
        let grammar = this.grammars.get(key);
        if (grammar == null) {
            try {
                const created = create();
                grammar = typeof created === "string" ? new LlamaGrammar(this.of.llama, {grammar: created}) : created;
            } catch (error) {
                throw new InvalidJsonSchemaError((error as Error).message);
            }
            if (this.grammars.size >= maxCachedSchemaGrammars)
                this.grammars.delete(this.grammars.keys().next().value!);
        } else
            this.grammars.delete(key);
        this.grammars.set(key, grammar);
        return grammar;
    }
}
