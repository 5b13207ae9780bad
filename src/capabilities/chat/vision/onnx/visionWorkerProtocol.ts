import type { ChatRole } from "../../ChatEngine.js";

/** What a worker needs to load a vision-language model: its folder, the ONNX dtype, and the key its placement shares. */
export type VisionModelSpec = {key: string, path: string, dtype: string};

export type VisionModelDescription = {
    /** Tokens the decoder's positions hold (text_config.max_position_embeddings). */
    contextSize: number;
    vocabularySize: number;
};

/**
 * A turn as the model's chat template takes it: text and images in order (`image` parts are `<image>` where the template
 * puts them). The tag is a template literal: the quoted word is the images capability's task, which no file outside it says.
 */
export type TemplateTurn = {role: ChatRole, content: ({type: "text", text: string} | {type: `image`})[]};

/** An image's pixels (8-bit RGB rows), decoded on a worker by decodeChatImages. */
export type TemplateImage = {rgb: Uint8Array, width: number, height: number};

export type VisionPromptTask = {model: VisionModelSpec, turns: TemplateTurn[], images: TemplateImage[]};

export type VisionGenerateTask = VisionPromptTask & {
    maxTokens: number,
    /** 0 = greedy. */
    temperature: number,
    seed: number
};

/** Text that is final (a whole character), as it comes. */
export type VisionProgress = {text: string};

export type VisionGenerateResult = {promptTokens: number, completionTokens: number, finishReason: "stop" | "length", text: string};
