import type { EngineLoad } from "../../../../core/engines/EngineLoad.js";
import { ApiError } from "../../../../core/http/ApiError.js";
import type { WorkerPool } from "../../../../core/workers/WorkerPool.js";
import { PlacedModel } from "../../../../runtimes/onnx/PlacedModel.js";
import type { ChatEngine, ChatEngineInfo, ChatJob, ChatTurn, ChatRun, ChatRunHooks, ChoiceResult, DecisionJob, DecisionOutcome, TokenizeInput, Tokenized } from "../../ChatEngine.js";
import { ContextLengthExceededError } from "../../errors/ContextLengthExceededError.js";
import { TooManyChoicesError } from "../../errors/TooManyChoicesError.js";
import { choiceSeed } from "../../shared/choiceSeed.js";
import { mostDecisionOptions } from "../../shared/decisionLabels.js";
import { answerQuestions, askQuestions } from "../../shared/decisionQuestionText.js";
import { decodeChatImages } from "../decodeChatImages.js";
import { visionChatTaskHandles } from "./visionChatTaskHandles.js";
import type { TemplateTurn, VisionModelDescription, VisionModelSpec, VisionPromptTask, VisionTokenizeTask } from "./visionWorkerProtocol.js";

export type OnnxVisionChatEngineOptions = {
    id: string, path: string, dtype: string, parallel: number, queueSize: number, workers?: number,
    /** The served models that constrain output (JSON mode, json_schema, forced tools), named when this one refuses to; read at each refusal. */
    constrainingModels?: () => readonly string[]
};

/**
 * A chat engine on an ONNX vision-language model (SmolVLM / Idefics3 layout) in the shared worker pool: a job's images
 * decoded there (decodeChatImages), the prompt counted by the model's processor before the job takes its place in the
 * queue, one `generate` task per choice with its text sent as it comes (the sampling, stop sequences and logprobs in
 * the worker: VisionModel); tokenize, detokenize and decisions in the worker too. What it cannot do (constrained output,
 * tools, raw prompts) is refused naming the field and the served models that can (refuseUnsupported); it never answers
 * such a request unconstrained.
 */
export class OnnxVisionChatEngine implements ChatEngine {
    readonly info: ChatEngineInfo;

    private constructor(private readonly model: PlacedModel<VisionModelSpec, VisionModelDescription>, private readonly pool: WorkerPool,
        private readonly parallel: number, constrainingModels: () => readonly string[]) {
        this.info = {
            id: model.id, contextSize: model.described.contextSize, vocabularySize: model.described.vocabularySize,
            fingerprint: "fp_onnx_vision", toolCallFormat: null, vision: true, decisionOptions: mostDecisionOptions(model.described.decisionLabels),
            servedAlternatives: () => constrainingNote(constrainingModels())
        };
    }

    static load(pool: WorkerPool, options: OnnxVisionChatEngineOptions): Promise<OnnxVisionChatEngine> {
        const spec: VisionModelSpec = {key: `${options.path}|${options.dtype}`, path: options.path, dtype: options.dtype};
        return PlacedModel.place(pool, {
            id: options.id, spec, tasks: visionChatTaskHandles, preload: "one",
            parallel: options.parallel, queueSize: options.queueSize, workers: options.workers
        }, (model) => new OnnxVisionChatEngine(model, pool, options.parallel, options.constrainingModels ?? (() => [])));
    }

    load(): EngineLoad {
        return this.model.load();
    }

    /**
     * `n` choices as the llama engine makes them: the same prompt, each with its own seed (choiceSeed) and its own place
     * of the model's `parallel` (more is TooManyChoicesError), generated as one task each (side by side on as many of
     * the placement's workers as are free); the first failure stops the others.
     */
    async submit(job: ChatJob, hooks: ChatRunHooks): Promise<ChatRun> {
        refuseUnsupported(job, this.info);
        if (job.n > this.parallel)
            throw new TooManyChoicesError(this.info.id, job.n, this.parallel);
        const task = await this.promptTask(job.turns, hooks.signal);
        const promptTokens = await this.model.run(visionChatTaskHandles.promptTokens, task, {signal: hooks.signal});
        if (promptTokens >= this.info.contextSize)
            throw new ContextLengthExceededError(this.info.contextSize, promptTokens);
        const maxTokens = Math.min(job.maxTokens ?? Infinity, this.info.contextSize - promptTokens);
        const {sampling} = job;
        const done = this.model.admit(hooks.signal, async (): Promise<ChoiceResult[]> => {
            const failed = new AbortController();
            const signal = AbortSignal.any([hooks.signal, failed.signal]);
            return Promise.all(Array.from({length: job.n}, async (_, index) => {
                try {
                    const result = await this.model.run(visionChatTaskHandles.generate, {
                        ...task, maxTokens, stop: job.stop, logprobs: job.logprobs ?? null,
                        sampling: {
                            temperature: sampling.temperature, topP: sampling.topP, topK: sampling.topK ?? 0, seed: choiceSeed(sampling.seed, index),
                            frequencyPenalty: sampling.frequencyPenalty, presencePenalty: sampling.presencePenalty, logitBias: [...sampling.logitBias]
                        }
                    }, {signal, onProgress: ({text, logprobs}) => hooks.onText?.(index, text, logprobs)});
                    const choice: ChoiceResult = {
                        index, text: result.text, finishReason: result.finishReason, completionTokens: result.completionTokens,
                        ...(result.logprobs == null ? {} : {logprobs: result.logprobs}),
                        ...(result.stopSequence == null ? {} : {stopSequence: result.stopSequence})
                    };
                    hooks.onFinish?.(choice);
                    return choice;
                } catch (error) {
                    failed.abort(error);
                    throw hooks.signal.aborted ? hooks.signal.reason : error;
                }
            }));
        }, job.n);
        return {promptTokens, done};
    }

    async countPromptTokens(job: ChatJob, signal: AbortSignal = new AbortController().signal): Promise<number> {
        return this.model.run(visionChatTaskHandles.promptTokens, await this.promptTask(job.turns, signal), {signal});
    }

    /** No tokenizer on the main thread (it would load ONNX Runtime there); only a reasoning model's usage asks for it. */
    countTextTokens(): number {
        throw new Error(`The vision model '${this.info.id}' counts no text tokens on the main thread.`);
    }

    /**
     * In the model's worker, through its tokenizer (never on the main thread: it would load ONNX Runtime here), taking one
     * of the model's places as a chat request does (refused the same way when its queue is full). A conversation's
     * tokens are the chat request's prompt, images' tokens included.
     */
    async tokenize(input: TokenizeInput, options: {withPieces: boolean, signal?: AbortSignal}): Promise<Tokenized> {
        const signal = options.signal ?? new AbortController().signal;
        if (input.kind === "text" && !input.parseSpecial)
            throw ApiError.invalidRequest(`'parse_special': false is not supported by the vision model '${this.info.id}': its tokenizer (transformers.js) always reads special-token text as those tokens.`, "parse_special", "unsupported_parameter");
        const task: VisionTokenizeTask = input.kind === "text"
            ? {model: this.model.spec, withPieces: options.withPieces, kind: "text", text: input.text, addSpecial: input.addSpecial}
            : {model: this.model.spec, withPieces: options.withPieces, kind: "prompt", prompt: await this.promptTask(input.job.turns, signal)};
        return this.model.admit(signal, () => this.model.run(visionChatTaskHandles.tokenize, task, {signal}));
    }

    /** Control tokens written as their text, in the model's worker. */
    async detokenize(tokens: readonly number[]): Promise<string> {
        const signal = new AbortController().signal;
        return this.model.admit(signal, () => this.model.run(visionChatTaskHandles.detokenize, {model: this.model.spec, tokens: [...tokens]}, {signal}));
    }

    /**
     * Decision questions by the llama engine's rules (askQuestions, labelProbabilities, answerQuestions: every question in
     * both option orders, label probabilities from the next-token distribution, averaged), evaluated in the model's
     * worker (visionDecisions) with the input's images; one of the model's places while it runs.
     */
    async decide(job: DecisionJob, signal: AbortSignal): Promise<DecisionOutcome> {
        const asked = askQuestions(job.questions, this.model.described.decisionLabels);
        const prompt = await this.promptTask(job.turns, signal);
        const result = await this.model.admit(signal, () => this.model.run(visionChatTaskHandles.decide,
            {...prompt, questions: asked.map(({text, shown}) => ({text, shown}))}, {signal}));
        if ("exceeded" in result)
            throw new ContextLengthExceededError(this.info.contextSize, result.exceeded);
        return {
            probabilities: answerQuestions(job.questions.length, asked, result.labels),
            prefixTokens: result.prefixTokens, suffixTokens: result.suffixTokens, cachedTokens: 0
        };
    }

    /** The turns as the chat template takes them (each image where it stands in its turn's text) and the images decoded. */
    private async promptTask(chatTurns: readonly ChatTurn[], signal: AbortSignal): Promise<VisionPromptTask> {
        const turns: TemplateTurn[] = chatTurns.map((turn) => {
            const content: TemplateTurn["content"] = [];
            let at = 0;
            for (const {offset} of turn.images ?? []) {
                if (offset > at)
                    content.push({type: "text", text: turn.content.slice(at, offset)});
                content.push({type: "image"});
                at = offset;
            }
            if (at < turn.content.length || content.length === 0)
                content.push({type: "text", text: turn.content.slice(at)});
            return {role: turn.role, content};
        });
        const images = await decodeChatImages(this.pool, chatTurns.flatMap((turn) => turn.images ?? []).map(({image}) => image), signal);
        return {model: this.model.spec, turns, images: images.map(({rgb, width, height}) => ({rgb, width, height}))};
    }

    dispose(): Promise<void> {
        return this.model.dispose();
    }
}

/**
 * What this engine does not do: constrained output (JSON mode, `json_schema`, a forced tool call: no grammar-driven
 * logits processor here yet) and raw prompts, refused naming the chat field (each format names its own) and, for the
 * constraints, the served models that can; never answered unconstrained.
 */
function refuseUnsupported(job: ChatJob, info: ChatEngineInfo) {
    const refuse = (param: string, what: string, others = "") => {
        throw ApiError.invalidRequest(`${what} is not supported by the vision model '${info.id}'.${others}`, param, "unsupported_parameter");
    };
    const served = info.servedAlternatives?.() ?? "";
    if (job.rawPrompt != null)
        refuse("prompt", "A raw prompt (/v1/completions)");
    if (job.jsonSchema != null)
        refuse("response_format", "Structured output ('response_format' json_schema)", served);
    if (job.jsonObject)
        refuse("response_format", "JSON mode ('response_format' json_object)", served);
    if (job.tools?.choice.type === "forced")
        refuse("tool_choice", "A forced tool call ('tool_choice')", served);
    if (job.sampling.minP != null)
        refuse("min_p", "'min_p'", served);
    if (job.sampling.ignoreEos === true)
        refuse("ignore_eos", "'ignore_eos'", served);
    if (job.sampling.repeatPenalty != null)
        refuse(job.sampling.repeatPenalty.param, `'${job.sampling.repeatPenalty.param}'`, served);
}

/** The served models that can do what this engine refuses (GGUF chat models: node-llama-cpp's grammars and samplers), as a refusal's last sentence. */
function constrainingNote(models: readonly string[]): string {
    return models.length === 0
        ? " No model served here can (GGUF chat models can: grammars, tools and llama.cpp's samplers; none is served)."
        : ` Served models that can: ${models.map((model) => `'${model}'`).join(", ")}.`;
}
