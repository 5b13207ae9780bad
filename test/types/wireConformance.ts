/**
 * Type-only conformance of the hand-written wire types to the official SDKs' (`openai`, `@anthropic-ai/sdk`, used
 * unchanged): what this server sends must be what the SDK reads (our answer types assignable to theirs), and what
 * the SDK sends must be a request this server's types take where the server takes the whole API (chat completions;
 * the others refuse by design what their models cannot do: images, documents, hosted tools). Checked by `tsc`
 * (`npx tsc --noEmit -p .` includes test/); nothing here runs. A field renamed or retyped on either side fails the
 * typecheck on the line naming the two types.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from "../../src/capabilities/chat/ChatCompletionWire.js";
import type { TextCompletion } from "../../src/capabilities/chat/completions/CompletionWire.js";
import type { AnthropicErrorBody, AnthropicErrorType, ImageBlock, Message, MessageStreamEvent } from "../../src/capabilities/chat/messages/MessagesWire.js";
import type { InputImage, OutputItem, ResponseObject, ResponseUsage } from "../../src/capabilities/chat/responses/ResponsesWire.js";

/** Compiles only when `From` is assignable to `To`. */
type Conforms<From extends To, To> = [From, To];

/**
 * An SDK type with its nullable fields optional, at every depth: the SDKs type a field the API may leave empty as
 * required and nullable, where this server leaves it out (a client reads both as "none"). Every other field stays required.
 */
type MayOmitNull<T> = T extends readonly (infer E)[] ? MayOmitNull<E>[]
    : T extends object ? {[K in keyof T as null extends T[K] ? K : never]?: MayOmitNull<T[K]>} & {[K in keyof T as null extends T[K] ? never : K]: MayOmitNull<T[K]>}
        : T;

export type WireConformance = [
    // Chat completions: the answer, each chunk, and every request the SDK can send.
    Conforms<ChatCompletion, OpenAI.ChatCompletion>,
    Conforms<ChatCompletionChunk, OpenAI.ChatCompletionChunk>,
    Conforms<OpenAI.ChatCompletionCreateParams, ChatCompletionRequest>,
    // Legacy completions. Echoed logprobs: the first prompt token has a null logprob and null alternatives (nothing
    // precedes it), as OpenAI sends them, where the SDK types numbers and maps only. Its stream's chunks are typed as
    // the answer (finish_reason never null): not checked.
    Conforms<TextCompletion, Omit<OpenAI.Completion, "choices"> & {
        choices: (Omit<OpenAI.CompletionChoice, "logprobs"> & {logprobs: (Omit<OpenAI.CompletionChoice.Logprobs, "token_logprobs" | "top_logprobs"> & {
            token_logprobs?: (number | null)[], top_logprobs?: (Record<string, number> | null)[]
        }) | null})[]
    }>,
    // Responses: `output_text` is the SDK's own convenience property, computed from `output`, not on the wire; `usage` is
    // null until the response is done (as OpenAI's response.created has it), where the SDK types it optional. Known gaps,
    // echoes of the request typed as loosely as the schema takes them: `reasoning.summary` (any string, the SDK's an
    // enum), `tools` and `tool_choice` (built-in tools and their choices are `{type: string}` here).
    Conforms<ResponseObject, Omit<MayOmitNull<OpenAI.Responses.Response>, "output_text" | "usage" | "reasoning" | "tools" | "tool_choice"> & {
        usage: OpenAI.Responses.ResponseUsage | null, reasoning: {effort?: OpenAI.ReasoningEffort}
    }>,
    Conforms<OutputItem, MayOmitNull<OpenAI.Responses.ResponseOutputItem>>,
    Conforms<ResponseUsage, OpenAI.Responses.ResponseUsage>,
    // Messages. Known gap: a `tool_use` block has no `caller` (Anthropic's newer field, `{type: "direct"}` for a call
    // the model made itself). `request_too_large` (413) is an error type Anthropic documents and its SDK's union lacks.
    Conforms<Message, Omit<MayOmitNull<Anthropic.Message>, "content"> & {
        content: (MayOmitNull<Anthropic.TextBlock> | MayOmitNull<Anthropic.ThinkingBlock> | Omit<MayOmitNull<Anthropic.ToolUseBlock>, "caller">)[]
    }>,
    // A streamed Message's events (`ping` is not in the SDK's union: its stream skips it), with the same known gap.
    Conforms<Exclude<MessageStreamEvent, {type: "ping"}>, MayOmitNull<Exclude<Anthropic.RawMessageStreamEvent, Anthropic.RawContentBlockStartEvent>>
        | (Omit<MayOmitNull<Anthropic.RawContentBlockStartEvent>, "content_block"> & {
            content_block: MayOmitNull<Anthropic.TextBlock> | MayOmitNull<Anthropic.ThinkingBlock> | Omit<MayOmitNull<Anthropic.ToolUseBlock>, "caller">
        })>,
    Conforms<AnthropicErrorBody<Exclude<AnthropicErrorType, "request_too_large">>, Anthropic.ErrorResponse>,
    // Images as the SDKs send them (chat's image part is covered by the whole request above): Responses' `input_image`
    // (its `prompt_cache_breakpoint` is not read), Messages' image block (`cache_control` and `transformations` not read).
    Conforms<Omit<OpenAI.Responses.ResponseInputImage, "prompt_cache_breakpoint">, InputImage>,
    Conforms<Omit<Anthropic.ImageBlockParam, "cache_control" | "transformations">, ImageBlock>
];
