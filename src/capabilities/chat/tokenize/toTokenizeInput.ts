import { ApiError } from "../../../core/http/ApiError.js";
import type { ChatEngineInfo, TokenizeInput } from "../ChatEngine.js";
import type { ChatCompletionRequest } from "../ChatCompletionWire.js";
import { parseLargeArguments } from "../parseLargeArguments.js";
import { toChatJob } from "../toChatJob.js";
import type { TokenizeRequest } from "./TokenizeWire.js";

const sources = ["content", "prompt", "messages"] as const;
/** Fields that only shape a conversation's rendering. */
const conversationOnly = ["tools", "chat_template_kwargs", "add_generation_prompt", "continue_final_message"] as const;

/**
 * What a tokenize request asks the engine for: its text (llama-server's `content`, add_special off by default; vLLM's
 * `prompt`, add_special_tokens on by default; both parse special-token text, as llama-server and Hugging Face
 * tokenizers do), or its `messages` as the prompt of the chat request they would make (toChatJob: the same checks, the
 * same 400s naming the same fields; the prompt ends with the generation prompt, as every chat request's does).
 */
export async function toTokenizeInput(request: TokenizeRequest, engine: ChatEngineInfo, visionModels: readonly string[] = []): Promise<TokenizeInput> {
    const given = sources.filter((field) => request[field] != null);
    if (given.length === 0)
        throw ApiError.invalidRequest("Missing required parameter: 'content' (or 'prompt', or 'messages'): the text or conversation to tokenize.", "content");
    if (given.length > 1)
        throw ApiError.invalidRequest(`'${given[1]}' and '${given[0]}' cannot be sent together: send the one text or conversation to tokenize.`, given[1]);
    if (request.add_special != null && request.add_special_tokens != null && request.add_special !== request.add_special_tokens)
        throw ApiError.invalidRequest("'add_special' (llama-server's name) and 'add_special_tokens' (vLLM's) are the same setting and were given different values; send one.", "add_special");
    if (request.return_token_strs === true)
        throw ApiError.invalidRequest("'return_token_strs' is not supported; send 'with_pieces': true for each token's text.", "return_token_strs");
    if (request.messages == null) {
        const misplaced = conversationOnly.find((field) => request[field] != null);
        if (misplaced != null)
            throw ApiError.invalidRequest(`'${misplaced}' applies to 'messages' only; it cannot be sent with '${given[0]}'.`, misplaced);
        return {
            kind: "text", text: request.content ?? request.prompt ?? "",
            addSpecial: request.add_special_tokens ?? request.add_special ?? request.content == null,
            parseSpecial: request.parse_special ?? true
        };
    }
    if (request.add_generation_prompt === false)
        throw ApiError.invalidRequest("'add_generation_prompt': false is not supported: the tokens of 'messages' are a chat request's prompt, which ends with the generation prompt.", "add_generation_prompt");
    if (request.continue_final_message === true)
        throw ApiError.invalidRequest("'continue_final_message' is not supported: the tokens of 'messages' are a chat request's prompt, which ends with the generation prompt.", "continue_final_message");
    const chat: ChatCompletionRequest = {model: engine.id, messages: request.messages, tools: request.tools, chat_template_kwargs: request.chat_template_kwargs};
    return {kind: "prompt", job: toChatJob(chat, engine, await parseLargeArguments(request.messages), visionModels)};
}
