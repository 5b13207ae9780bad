import type { Engine } from "../../core/engines/Engine.js";

/**
 * What the HTTP layer needs from a chat backend. Engine types are deliberately not the OpenAI wire
 * types: `toChatJob.ts` and `chatResponses.ts` convert between the two, so the wire format can evolve without
 * touching the engine and tests can fake an engine without a model.
 */
export type ChatRole = "system" | "user" | "assistant";

/** A call the assistant made in an earlier turn, with the result the client sent back for it. */
export type ChatToolCallTurn = {name: string, arguments: unknown, result: string};

/**
 * `toolCalls` only on assistant turns: the calls it made (after `content`), each with its result.
 * An assistant turn that follows one with tool calls continues the same model response.
 * `reasoning`: an assistant turn's reasoning as the client sent it back (`reasoning_content`, a Responses `reasoning`
 * item), for a prompt renderer that can render earlier reasoning; the templates' own rules decide where it shows.
 */
export type ChatTurn = {role: ChatRole, content: string, toolCalls?: ChatToolCallTurn[], reasoning?: string, images?: TurnImage[]};

/** The image formats a request may send (by their media type): what browsers and the OpenAI and Anthropic APIs take. */
export type ChatImageType = "image/png" | "image/jpeg" | "image/webp" | "image/gif";

/**
 * An image a client sent, still in its base64 (its type one of the four, its size within the limit): a vision engine
 * decodes it in a worker (decodeChatImages), where its bytes are checked to be the type said. `source` names the part
 * it came from in the chat request (`messages[2].content[1]`), for an error about it that each format turns into the
 * client's field. `detail`: the client's hint (OpenAI's `low`/`high`/`auto`/`original`); `low` scales it smaller.
 */
export type ChatImage = {type: ChatImageType, base64: string, detail: ImageDetail, source: string};

export type ImageDetail = "auto" | "low" | "high" | "original";

/** An image of a turn, where it stands in the turn's `content` (a UTF-16 offset: the text before it is `content.slice(0, offset)`). */
export type TurnImage = {image: ChatImage, offset: number};

/** A function the model may call: `parameters` as the client sent it (rendered into the prompt). */
export type ChatToolFunction = {name: string, description?: string, parameters: Record<string, unknown>};

export type ChatTools = {
    functions: ChatToolFunction[];
    /**
     * `none`: the tools are in the prompt, the output is text. `auto`: calls the model writes in the
     * template's format are parsed out. `forced`: the output is constrained to calls of these
     * functions (each with its checked argument schema); one call, or several when `parallel`.
     */
    choice: {type: "none"} | {type: "auto"} | {type: "forced", functions: {name: string, schema: Record<string, unknown>}[], parallel: boolean};
};

/**
 * How a model's template writes a call: prefix + name + paramsPrefix + arguments + suffix, calls joined by `betweenCalls`.
 * The arguments are one JSON object, or with `parameters` one markup pair per argument (Qwen3-Coder's, GLM-4.6's:
 * parameterMarkup.ts), `paramsPrefix` and `suffix` then ending the name and the call.
 */
/**
 * How a template's calls are written: `prefix name paramsPrefix <arguments> suffix`, calls joined by `betweenCalls`.
 * The arguments are JSON, or each in markup (`parameters`), or in Gemma 4's notation (`notation`: gemma4Arguments.ts).
 * Without a suffix (Mistral's, Devstral's) the arguments' JSON object ends the call. `idMarker`: the name is followed by
 * this and a call id the model writes (Mistral Small 3.2's `[CALL_ID]` and 9 letters and digits, Kimi-K2's `:` and its
 * index) before `paramsPrefix`; `idPattern`: the id's GBNF, for a forced call.
 * `forcedOpening`: a forced call is opened by the prompt with this text (the prefix), a grammar writes its name and
 * arguments, and the model's end of generation is its suffix (harmony, where a call is a message of its own: one call).
 * `list`: the calls are items of one list the prefix opens (LFM2's `<|tool_call_start|>[a(...), b(...)]<|tool_call_end|>`,
 * Nemotron-Nano-v2's `<TOOLCALL>[{"name": ..., "arguments": {...}}, ...]</TOOLCALL>`): after a call, `separator`, the
 * next item's `item` markup and its name, or `end`; then another list may start. The Python notation (`notation`
 * "python", pythonCalls.ts) ends a call's arguments at the `)` that closes them, and JSON arguments in a list end where
 * their object closes, read, not searched for (the call's suffix, `}`, is the object's own closing brace's text).
 * `firstStart`: the first call may start with this alone, the prefix without its opening tag (Qwen3-Coder's models skip
 * `<tool_call>` and write `<function=NAME>` straight away, as llama.cpp reads them).
 */
export type ToolCallFormat = {
    prefix: string, paramsPrefix: string, suffix: string, betweenCalls: string, parameters?: ParameterMarkup, notation?: "gemma4" | "python",
    idMarker?: string, idPattern?: string, forcedOpening?: string, list?: {separator: string, end: string, item: string}, firstStart?: string
};

/**
 * One argument of a call in markup: keyStart + key + keyEnd + value + valueEnd; `jsonKeyEnd`: the key's end before a value
 * that is not a string, which is JSON (DeepSeek-V3.2's and V4's ` string="false">` for their ` string="true">`).
 */
export type ParameterMarkup = {keyStart: string, keyEnd: string, valueEnd: string, jsonKeyEnd?: string};

/** `cut`: the generation stopped inside this call (its arguments are what was written so far). */
export type GeneratedToolCall = {name: string, arguments: string, cut?: true};

/** `index` counts the calls of one choice. */
export type ToolCallEvent = {type: "call", index: number, name: string} | {type: "arguments", index: number, fragment: string};

export type SamplingOptions = {
    /** 0 = greedy. */
    temperature: number;
    topP: number;
    /** Only the k most likely tokens (Anthropic's `top_k`, llama-server's and vLLM's); absent or 0 = the whole vocabulary. */
    topK?: number;
    /** Only tokens at least this fraction as likely as the most likely one (llama.cpp's `min_p`); absent = no floor. */
    minP?: number;
    /**
     * llama.cpp's repetition penalty (`repeat_penalty`, vLLM's `repetition_penalty`): the logits of tokens among the
     * last `lastN` of the prompt and the completion are divided by `penalty` (multiplied when negative); the frequency
     * and presence penalties then look at the same window. `param`: the field the client named it by, for a model that refuses it.
     */
    repeatPenalty?: {penalty: number, lastN: number, param: string};
    /** Generation runs on past end-of-generation tokens (every one banned) until `maxTokens` (llama-server's and vLLM's `ignore_eos`). */
    ignoreEos?: boolean;
    /** Seed of the first choice; the other choices derive theirs from it. */
    seed: number;
    frequencyPenalty: number;
    presencePenalty: number;
    /** token id -> value added to its logit; -100 bans, 100 forces. */
    logitBias: ReadonlyMap<number, number>;
};

/** A prompt taken as it is, without the chat template (the legacy /v1/completions). */
export type RawPrompt = {
    /**
     * Text, tokenized as llama.cpp tokenizes a prompt (control-token text stays plain text; BOS
     * first when the model wants one), or token ids, used exactly as given.
     */
    prompt: string | readonly number[];
    /** Fill in the middle: the text after the gap (only on a model whose info says `fillInTheMiddle`). */
    suffix?: string | null;
    /** Report the prompt back through `onPrompt` before any text (with logprobs when the job asks for them). */
    echo?: boolean;
};

/** A prompt token as echoed: `logprob` is null for a token that nothing precedes (no BOS before it). */
export type PromptTokenLogprob = {
    token: string;
    bytes: number[];
    logprob: number | null;
    topLogprobs: TopLogprob[] | null;
    /** Where the token's text starts in the echoed text. */
    offset: number;
};

/** The echoed prompt: its text and, when the job asks for logprobs, one entry per token of it. */
export type PromptEcho = {text: string, tokens?: PromptTokenLogprob[]};

export type ChatJob = {
    turns: ChatTurn[];
    /** When set, the prompt is this instead of `turns` (then empty): no template, tools or JSON constraints. */
    rawPrompt?: RawPrompt | null;
    /** Number of choices, each on its own sequence. */
    n: number;
    /** null = until the context is full; 0 = only evaluate the prompt (for its echoed logprobs). */
    maxTokens: number | null;
    stop: string[];
    sampling: SamplingOptions;
    /** Constrain the output to a JSON object (JSON mode). */
    jsonObject: boolean;
    /** Constrain the output to this JSON schema (already checked to be enforceable); wins over `jsonObject`. */
    jsonSchema: Record<string, unknown> | null;
    /**
     * null: no logprobs. Otherwise every generated token gets a logprobs entry with this many
     * (0..5) most likely alternatives, from the model's raw distribution (see RawDistributionTap).
     */
    logprobs?: number | null;
    /** Tools offered to the model; absent or null = none. */
    tools?: ChatTools | null;
    /** A thinking model's reasoning for this job; absent or null = the model's default (it thinks, unbounded). Ignored by other models. */
    reasoning?: ReasoningControls | null;
    /** Extra variables for the chat template (llama-server's and vLLM's `chat_template_kwargs`, e.g. Qwen3's `enable_thinking`). */
    templateKwargs?: Record<string, unknown> | null;
};

/**
 * `enabled: false`: no thinking (the template's `enable_thinking: false` where it has one, else an empty
 * think block written after the generation prompt). `budgetTokens`: after this many tokens of reasoning the
 * think block is closed by the engine and the answer begins; null = unbounded.
 */
export type ReasoningControls = {
    enabled: boolean, budgetTokens: number | null,
    /** The effort asked for (low/medium/high...): also the template's `reasoning_effort` where it has one (gpt-oss). */
    effort?: string
};

export type TopLogprob = {
    /** The token's text (U+FFFD where its bytes are not a whole UTF-8 character). */
    token: string;
    /** Natural log of its probability under the model's softmax, before sampling transformations. */
    logprob: number;
    /** The exact bytes the token stands for. */
    bytes: number[];
};

export type TokenLogprob = TopLogprob & {topLogprobs: TopLogprob[]};

export type FinishReason = "stop" | "length" | "tool_calls";

export type ChoiceResult = {
    index: number;
    text: string;
    finishReason: FinishReason;
    completionTokens: number;
    /** One entry per token whose text is in `text` (when the job asked for logprobs). */
    logprobs?: TokenLogprob[];
    /**
     * Calls parsed out of `text` (finishReason "tool_calls"); `text` is then only what came before
     * the first call, trimmed.
     */
    toolCalls?: GeneratedToolCall[];
    /** Prompt tokens this choice took from the prompt cache instead of evaluating them; absent = no prompt cache. */
    cachedPromptTokens?: number;
    /** The stop sequence that ended the text, when one did (finishReason "stop"). */
    stopSequence?: string;
    /**
     * A thinking model's reasoning, apart from `text` (which is then the answer only); null when it did not
     * reason; absent for a model whose output is not split.
     */
    reasoning?: string | null;
    /** Tokens of `reasoning` (its tags included), part of `completionTokens`. */
    reasoningTokens?: number;
};

export type ChatEngineInfo = {
    id: string;
    contextSize: number;
    vocabularySize: number;
    /** Identifies the backend configuration; see systemFingerprint.ts. */
    fingerprint: string;
    /** How the model's chat template writes tool calls; absent or null = the model has no tool support. */
    toolCallFormat?: ToolCallFormat | null;
    /** The vocabulary has fill-in-the-middle tokens (prefix, suffix, middle), so a raw prompt may have a `suffix`. */
    fillInTheMiddle?: boolean;
    /** How the model writes its reasoning, when its answers are to be split (`--reasoning-format parsed`); absent or null = not split. */
    reasoningFormat?: ReasoningFormat | null;
    /** Most options a decision question may have on this model: its answer labels (absent = decisions not supported). */
    decisionOptions?: number;
    /** The model takes images in its turns (`ChatTurn.images`); absent or false = text only, and a job with images is refused before it reaches it. */
    vision?: boolean;
    /**
     * A sentence naming the served models that can do what this one refuses (tools, constrained output), added to those
     * refusals: the vision engine's, read when a refusal is written (the served models may change); absent = none added.
     */
    servedAlternatives?(): string;
};

/**
 * How a thinking model writes its reasoning: `think-tags` (`<think>...</think>` before the answer: Qwen3,
 * DeepSeek-R1 distills, QwQ, most reasoning models), `gemma4` (the same shape in Gemma 4's tags,
 * `<|channel>thought\n...<channel|>`), `mistral` (the same shape in Mistral's tags, `[THINK]...[/THINK]`: Magistral,
 * Ministral-3 Reasoning), `seed` (ByteDance Seed-OSS's `<seed:think>...</seed:think>`), `hy3` (Tencent Hy3's
 * `<think:opensource>...</think:opensource>`), `apriel` (Apriel-1.6's: the prompt opens the thought with
 * `Here are my reasoning steps:\n`, `[BEGIN FINAL RESPONSE]` ends it) or `harmony` (gpt-oss: an `analysis` channel, then the
 * `final` channel, each message framed by `<|channel|>NAME<|message|>...<|end|>`).
 */
export type ReasoningFormat = "think-tags" | "gemma4" | "mistral" | "seed" | "hy3" | "apriel" | "harmony";

export type ChatRunHooks = {
    signal: AbortSignal;
    /**
     * Text of choice `index` that is final (never a partial stop sequence, never half a UTF-8
     * character), with the logprobs entries of the tokens whose text it completes (when asked for;
     * then `text` may be "" for tokens whose text is empty).
     */
    onText?: (index: number, text: string, logprobs?: TokenLogprob[]) => void;
    /**
     * With tools (tool_choice auto or forced) the text is parsed as it comes: `onText` gets only the
     * content, and calls arrive here: a `call` event when a call starts (its name), then its
     * `arguments` fragments, which concatenate to the call's final `arguments`.
     */
    onToolCall?: (index: number, event: ToolCallEvent, logprobs?: TokenLogprob[]) => void;
    /**
     * A thinking model's reasoning, as it comes (before the answer's `onText`); the tags reach neither.
     * Only for a model whose `reasoningFormat` is set.
     */
    onReasoning?: (index: number, text: string) => void;
    /**
     * Called once per choice when it has its sequence, before its prompt is evaluated: how many of the prompt's
     * tokens the prompt cache serves (the rest are evaluated); never during `submit`. A stream reports its prompt's
     * usage from it up front.
     */
    onPromptCache?: (index: number, cachedPromptTokens: number) => void;
    /** Called once, before any text, when the job's raw prompt asks for echo. */
    onPrompt?: (echo: PromptEcho) => void;
    /** Called once per choice when it finishes (before the whole run settles). */
    onFinish?: (result: ChoiceResult) => void;
};

export type ChatRun = {
    promptTokens: number;
    /** Settles when every choice finished; rejects with the first engine failure. */
    done: Promise<ChoiceResult[]>;
};

/**
 * What /v1/tokenize tokenizes: text as it is (llama.cpp's tokenizer: `addSpecial` puts BOS (and EOS) where the model's
 * vocabulary asks for them, `parseSpecial` reads control-token text as those tokens), or a job's prompt exactly as
 * `submit` would render it (the chat template, tools, BOS).
 */
export type TokenizeInput =
    | {kind: "text", text: string, addSpecial: boolean, parseSpecial: boolean}
    | {kind: "prompt", job: ChatJob};

/** A token's text piece (llama-server's `with_pieces`): its text when its bytes are valid UTF-8 on their own, else the bytes. */
export type TokenPiece = string | number[];

/**
 * A tokenize result: the tokens (and their pieces when asked); or, for a long list prepared off the main thread, the
 * list as the tokenize routes write it (`tokens`: ids or `{id, piece}` objects), as UTF-8 JSON, and its length.
 */
export type Tokenized = {tokens: number[], pieces?: TokenPiece[]} | {count: number, json: Uint8Array};

/** A question the model answers by picking one of `options` (their text as shown to it), read from its next-token distribution. */
export type DecisionQuestion = {instructions: string, options: string[]};

/** Questions about one input (`turns`), each answered over the input's prompt as a shared prefix (thinking off). */
export type DecisionJob = {turns: ChatTurn[], questions: DecisionQuestion[]};

export type DecisionOutcome = {
    /** Per question, per option: its probability (summing to 1), averaged over the options shown in their given and in reversed order. */
    probabilities: number[][];
    /** The shared prefix's tokens, and every question suffix's tokens as evaluated (each question twice: both orders). */
    prefixTokens: number;
    suffixTokens: number;
    /** Prefix tokens the prompt cache served on the sequence that kept the most of it. */
    cachedTokens: number;
};

export interface ChatEngine extends Engine {
    readonly info: ChatEngineInfo;
    /**
     * Renders and tokenizes the prompt (off the main thread when it is large) and takes a place in the model's
     * queue; settles once it has, so that a prompt that does not fit (`ContextLengthExceededError`) or a full
     * queue (`QueueFullError`) is reported before any response header is sent. `hooks` are called only after it
     * has settled (a caller may set up what they write to once it has the run).
     */
    submit(job: ChatJob, hooks: ChatRunHooks): Promise<ChatRun>;
    /** The prompt tokens `job` would take (the rendered template, tools included), without running it; its render stops when `signal` aborts. */
    countPromptTokens(job: ChatJob, signal?: AbortSignal): Promise<number>;
    /**
     * At least how many tokens client text of `utf8Bytes` bytes becomes in any prompt of this model (the prompt floor's
     * rule for text), without the text; absent, or 0 for any size, where the tokenizer gives no such bound.
     */
    textTokensAtLeast?(utf8Bytes: number): number;
    /** Tokens of a piece of generated text (the reasoning part of an answer, for usage). */
    countTextTokens(text: string): number;
    /**
     * The tokens of `input` (off the main thread when it is large), with their pieces when asked; needs no sequence,
     * but is refused as `submit` would be while the model's queue is full (`QueueFullError`). A large render stops
     * when `signal` aborts (the client left).
     */
    tokenize(input: TokenizeInput, options: {withPieces: boolean, signal?: AbortSignal}): Promise<Tokenized>;
    /** The text of token ids (all in the vocabulary): llama.cpp's detokenizer, control tokens written as their text. */
    detokenize(tokens: readonly number[]): Promise<string>;
    /**
     * Answers decision questions from the model's next-token distribution at the answer position (no sampling): the job
     * waits for sequences through admission (`QueueFullError` when the queue is full) and stops when `signal` aborts.
     * A question may have at most `info.decisionOptions` options.
     */
    decide(job: DecisionJob, signal: AbortSignal): Promise<DecisionOutcome>;
    dispose(): Promise<void>;
}
