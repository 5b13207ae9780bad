import type { ChatRole, TokenLogprob, Tokenized } from "../../ChatEngine.js";
import type { DecisionLabels } from "../../shared/decisionLabels.js";
import type { AskedQuestion } from "../../shared/decisionQuestionText.js";

/** What a worker needs to load a vision-language model: its folder, the ONNX dtype, and the key its placement shares. */
export type VisionModelSpec = {key: string, path: string, dtype: string};

export type VisionModelDescription = {
    /** Tokens the decoder's positions hold (text_config.max_position_embeddings). */
    contextSize: number;
    vocabularySize: number;
    /** The labels decision questions' options get on its vocabulary (decisionLabels). */
    decisionLabels: DecisionLabels<number>;
};

/**
 * A turn as the model's chat template takes it: text and images in order (`image` parts are `<image>` where the template
 * puts them). The tag is a template literal: the quoted word is the images capability's task, which no file outside it says.
 */
export type TemplateTurn = {role: ChatRole, content: ({type: "text", text: string} | {type: "image"})[]};

/** An image's pixels (8-bit RGB rows), decoded on a worker by decodeChatImages. */
export type TemplateImage = {rgb: Uint8Array, width: number, height: number};

export type VisionPromptTask = {model: VisionModelSpec, turns: TemplateTurn[], images: TemplateImage[]};

/** A chat job's sampling, as the worker's logits processors apply it (chatLogitsProcessors, seededSampler). */
export type VisionSampling = {
    /** 0 = greedy (after the bias and the penalties). */
    temperature: number,
    topP: number,
    /** 0 = the whole vocabulary. */
    topK: number,
    /** This choice's (choiceSeed). */
    seed: number,
    frequencyPenalty: number,
    presencePenalty: number,
    logitBias: [token: number, bias: number][]
};

export type VisionGenerateTask = VisionPromptTask & {
    maxTokens: number,
    sampling: VisionSampling,
    stop: string[],
    /** null: no logprobs; else each token's entry with this many alternatives. */
    logprobs: number | null
};

/** Text that is final (a whole character, never part of a stop sequence), as it comes, with the entries of the tokens it completes. */
export type VisionProgress = {text: string, logprobs?: TokenLogprob[]};

export type VisionGenerateResult = {
    promptTokens: number, completionTokens: number, finishReason: "stop" | "length", text: string,
    logprobs?: TokenLogprob[], stopSequence?: string
};

/** /v1/tokenize's input: text (special-token text read as those tokens, as transformers.js's tokenizer always does), or a chat job's prompt. */
export type VisionTokenizeTask = {model: VisionModelSpec, withPieces: boolean} & (
    | {kind: "text", text: string, addSpecial: boolean}
    | {kind: "prompt", prompt: VisionPromptTask}
);

export type VisionTokenized = Tokenized;

export type VisionDetokenizeTask = {model: VisionModelSpec, tokens: number[]};

/** A decision job: its input's turns and images, and every question in every option order (askQuestions). */
export type VisionDecisionTask = VisionPromptTask & {questions: Pick<AskedQuestion<number>, "text" | "shown">[]};

/** Per asked question, its labels' probabilities; or, when a question's prompt does not fit the context, its tokens. */
export type VisionDecisionResult = {labels: number[][], prefixTokens: number, suffixTokens: number} | {exceeded: number};
