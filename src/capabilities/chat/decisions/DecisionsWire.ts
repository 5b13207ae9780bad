/**
 * The wire shapes of /v1/decisions (OpenAI's Decisions API: the `openai` package's resources/decisions.d.ts is the
 * reference) and /v1/systemone (TypeSafe's System One format), apart from the engine's types (ChatEngine's DecisionJob).
 */

export type DecisionInputText = {type: "input_text", text: string, prompt_cache_breakpoint?: unknown};
export type DecisionInputJson = {type: "input_json", data: Record<string, unknown> | Record<string, unknown>[]};
export type DecisionInputImage = {type: "input_image", image_url: string};
export type DecisionContentPart = DecisionInputText | DecisionInputJson | DecisionInputImage
    | {type: "output_text", text: string} | {type: "refusal", refusal: string};

export type DecisionInputItem =
    | {type?: "message", role: "user" | "developer" | "system" | "assistant", content: string | DecisionContentPart[]}
    | {type: "function_call", call_id: string, name: string, arguments: string}
    | {type: "custom_tool_call", call_id: string, name: string, input: string}
    | {type: "function_call_output" | "custom_tool_call_output", call_id: string, output: string | DecisionContentPart[]};

export type DecisionInstructions = string | DecisionContentPart[];

export type DecisionQuestionParam =
    | {type: "predicate", instructions: DecisionInstructions, name?: string}
    | {type: "choice", instructions: DecisionInstructions, choices: {value: string | boolean, description?: string}[], name?: string}
    | {type: "score", instructions: DecisionInstructions, levels: {label: string, description?: string}[], name?: string};

export type DecisionRequest = {
    model: string;
    input: string | DecisionInputItem[];
    questions: DecisionQuestionParam[];
    /** Accepted; the prompt cache is shared by every request (see docs/decisions.md). */
    prompt_cache_key?: string | null;
    prompt_cache_options?: unknown;
    safety_identifier?: string | null;
};

export type DecisionAnswer =
    | {type: "predicate", name: string | null, probability: number}
    | {type: "choice", name: string | null, choice: string | boolean, confidence: number, probabilities: {value: string | boolean, probability: number}[]}
    | {type: "score", name: string | null, score: number, confidence: number, probabilities: {label: string, value: number, probability: number}[]};

export type DecisionUsage = {
    input_tokens: number;
    input_tokens_details: {cached_tokens: number, cache_write_tokens: number};
    output_tokens: 0;
    output_tokens_details: {reasoning_tokens: 0};
    total_tokens: number;
};

export type DecisionResponse = {model: string, answers: DecisionAnswer[], usage: DecisionUsage};

/** System One: `state` is text or JSON; questions by name. */
export type SystemOneQuestion =
    | {type: "noul", instructions: unknown, criteria?: {true?: string, false?: string}}
    | {type: "choice", instructions: unknown, criteria: Record<string, string | null>}
    | {type: "score", instructions: unknown, criteria: string[]};

/** An image of a System One request, sent once in `assets` and referenced by its key in the state (TypeSafe's, as OpenRouter's `DecisionsImageAsset`). */
export type SystemOneImageAsset = {type?: "image", format: "png" | "jpeg", data_base64: string};

export type SystemOneRequest = {model: string, state: unknown, questions: Record<string, SystemOneQuestion>, assets?: Record<string, SystemOneImageAsset>};

export type SystemOneAnswer =
    | {type: "noul", noul: number}
    | {type: "choice", choice: string, confidence: number, probabilities: Record<string, number>}
    | {type: "score", score: number, confidence: number, probabilities: Record<string, number>};

export type SystemOneResponse = {model: string, answers: Record<string, SystemOneAnswer>, usage: {input_tokens: number, output_tokens: 0}};
