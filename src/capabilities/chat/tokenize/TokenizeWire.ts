import type { TokenPiece } from "../ChatEngine.js";
import type { WireMessage } from "../ChatCompletionWire.js";

/**
 * POST /v1/tokenize (and /tokenize): one body for llama-server's shape (`content`, `add_special`, `parse_special`,
 * `with_pieces`) and vLLM's (`model`, `prompt` or `messages`, `add_special_tokens`, `add_generation_prompt`,
 * `chat_template_kwargs`, `tools`). Exactly one of `content`, `prompt`, `messages`.
 */
export type TokenizeRequest = {
    /** The chat model; may be left out when the server serves one chat model (llama-server's tooling sends none). */
    model?: string;
    content?: string;
    prompt?: string;
    messages?: WireMessage[];
    tools?: unknown[] | null;
    chat_template_kwargs?: Record<string, unknown> | null;
    add_special_tokens?: boolean;
    add_special?: boolean;
    parse_special?: boolean;
    with_pieces?: boolean;
    add_generation_prompt?: boolean;
    continue_final_message?: boolean;
    return_token_strs?: boolean | null;
};

/** llama-server's `tokens` (ids, or `{id, piece}` with `with_pieces`) with vLLM's `count` and `max_model_len`. */
export type TokenizeResponse = {
    tokens: number[] | {id: number, piece: TokenPiece}[];
    count: number;
    max_model_len: number;
};

/** POST /v1/detokenize (and /detokenize): llama-server's and vLLM's body alike. */
export type DetokenizeRequest = {model?: string, tokens: unknown[]};

/** The text under both servers' names: llama-server's `content`, vLLM's `prompt`. */
export type DetokenizeResponse = {content: string, prompt: string};
