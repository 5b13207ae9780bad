import { toReasoningControls } from "./toReasoningControls.js";
import type { ChatEngineInfo, ChatJob, ChatToolCallTurn, ChatToolFunction, ChatTools, ChatTurn, TurnImage } from "./ChatEngine.js";
import { ApiError } from "../../core/http/ApiError.js";
import type { ChatCompletionRequest, WireContentPart, WireMessage } from "./ChatCompletionWire.js";
import { imageLimits } from "./vision/imageLimits.js";
import { imageFromUrl } from "./vision/toChatImage.js";
import { checkJsonSchema } from "./checkJsonSchema.js";
import { checkTemplateKwargs } from "./checkTemplateKwargs.js";
import { toLogitBias } from "./toLogitBias.js";
import { ParsedArguments } from "./parseLargeArguments.js";
import { toSamplingOptions } from "./toSamplingOptions.js";
import { isJsonObject } from "../../core/validation/isJsonObject.js";

/**
 * Converts a validated OpenAI request into an engine job, applying OpenAI's defaults and the
 * checks a schema cannot express. Pure: it needs only the engine's static info, and for a refused image the
 * served models that take images (`visionModels`).
 */
export function toChatJob(request: ChatCompletionRequest, engine: ChatEngineInfo, parsedArguments = new ParsedArguments(), visionModels: readonly string[] = []): ChatJob {
    rejectUnsupported(request, engine);
    if (usesDeprecatedFunctions(request)) {
        try {
            return toChatJob(fromDeprecatedFunctions(request), engine, new ParsedArguments(), visionModels);
        } catch (error) {
            throw error instanceof ApiError ? toDeprecatedError(error) : error;
        }
    }

    const turns = toTurns(request.messages, engine, parsedArguments);
    checkImages(turns, engine, visionModels);
    const tools = toTools(request, engine);
    const jsonObject = request.response_format?.type === "json_object";
    const jsonSchemaFormat = request.response_format?.type === "json_schema" ? request.response_format.json_schema : undefined;
    const jsonSchema = jsonSchemaFormat == null
        ? null
        : checkJsonSchema(jsonSchemaFormat.schema ?? {type: "object"}, "response_format.json_schema.schema");
    if (jsonObject && !turns.some((turn) => /json/i.test(turn.content)))
        throw ApiError.invalidRequest(
            "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
            "messages");

    if (request.max_tokens != null && request.max_completion_tokens != null && request.max_tokens !== request.max_completion_tokens)
        throw ApiError.invalidRequest(
            "'max_tokens' and 'max_completion_tokens' are the same setting and were given different values; send only 'max_completion_tokens'.",
            "max_completion_tokens");

    if (request.top_logprobs != null && request.logprobs !== true)
        throw ApiError.invalidRequest("Invalid value: 'top_logprobs' requires 'logprobs' to be set to true.", "top_logprobs");

    if (request.stream_options != null && request.stream !== true)
        throw ApiError.invalidRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options");

    return {
        turns,
        n: request.n ?? 1,
        maxTokens: request.max_completion_tokens ?? request.max_tokens ?? null,
        stop: request.stop == null ? [] : typeof request.stop === "string" ? [request.stop] : [...request.stop],
        jsonObject,
        jsonSchema,
        logprobs: request.logprobs === true ? request.top_logprobs ?? 0 : null,
        tools,
        sampling: toSamplingOptions(request, toLogitBias(request.logit_bias, engine.vocabularySize)),
        reasoning: toReasoningControls(request.reasoning_effort),
        templateKwargs: checkTemplateKwargs(request.chat_template_kwargs)
    };
}

function rejectUnsupported(request: ChatCompletionRequest, engine: ChatEngineInfo) {
    if (engine.toolCallFormat != null)
        return;
    const noTools = (param: string, what: string) => ApiError.invalidRequest(
        `${what} is not supported by the model '${engine.id}': its chat template has no tool support.${engine.servedAlternatives?.() ?? ""}`, param, "unsupported_parameter");
    if (request.tools != null && request.tools.length > 0)
        throw noTools("tools", "Tool calling ('tools')");
    if (request.tool_choice != null && request.tool_choice !== "none")
        throw noTools("tool_choice", "'tool_choice'");
    if (request.functions != null && request.functions.length > 0)
        throw noTools("functions", "Function calling ('functions')");
    if (request.function_call != null && request.function_call !== "none")
        throw noTools("function_call", "'function_call'");
}

/** The deprecated `functions` / `function_call` (or `function` messages), answered in their own response shape. */
export function usesDeprecatedFunctions(request: ChatCompletionRequest) {
    return (request.functions != null && request.functions.length > 0) || (request.function_call != null && request.function_call !== "none")
        || request.messages.some((message) => message.role === "function" || (message.role === "assistant" && message.function_call != null));
}

const deprecatedCallId = "deprecated_function_call";

/**
 * `functions` -> `tools`, `function_call` -> `tool_choice` (one call at most), an assistant's
 * `function_call` -> its one tool call, a `function` message -> the tool message answering it.
 */
function fromDeprecatedFunctions(request: ChatCompletionRequest): ChatCompletionRequest {
    if (request.tools != null && request.tools.length > 0)
        throw ApiError.invalidRequest("Use either 'tools' or the deprecated 'functions', not both.", "functions");
    const functionCall = request.function_call;
    let toolChoice: unknown;
    if (functionCall == null || functionCall === "none" || functionCall === "auto")
        toolChoice = functionCall ?? undefined;
    else if (isJsonObject(functionCall) && typeof functionCall.name === "string")
        toolChoice = {type: "function", function: {name: functionCall.name}};
    else
        throw ApiError.invalidRequest("Invalid value for 'function_call': expected 'none', 'auto' or {\"name\": ...}.", "function_call");
    const messages = request.messages.map((message) => {
        if (message.role === "assistant" && message.function_call != null) {
            const call = message.function_call as {name?: unknown, arguments?: unknown};
            return {...message, function_call: undefined, tool_calls: [{id: deprecatedCallId, type: "function", function: {name: call?.name, arguments: call?.arguments}}]};
        }
        if (message.role === "function")
            return {...message, role: "tool" as const, tool_call_id: deprecatedCallId};
        return message;
    });
    return {
        ...request,
        messages,
        tools: request.functions?.map((fn) => ({type: "function", function: fn})) ?? null,
        tool_choice: toolChoice,
        functions: null,
        function_call: null,
        parallel_tool_calls: false
    };
}

/** An error about the mapped request, told in terms of the deprecated fields the client sent. */
function toDeprecatedError(error: ApiError) {
    const rename = (text: string) => text
        .replace(/tools\[(\d+)\]\.function/g, "functions[$1]")
        .replace(/'tools'/g, "'functions'")
        .replace(/tool_choice/g, "function_call")
        .replace(/(messages\[\d+\])\.tool_calls(\[0\]\.function)?/g, "$1.function_call")
        .replace(/(messages\[\d+\])\.tool_call_id/g, "$1.role");
    return new ApiError(error.status, error.type, rename(error.message), {code: error.code, param: error.param == null ? null : rename(error.param), headers: error.headers});
}

const functionName = /^[a-zA-Z0-9_-]{1,64}$/;

function toTools(request: ChatCompletionRequest, engine: ChatEngineInfo): ChatTools | null {
    const wireTools = request.tools ?? [];
    const choice = request.tool_choice ?? (wireTools.length > 0 ? "auto" : "none");
    if (wireTools.length === 0) {
        if (choice !== "none")
            throw ApiError.invalidRequest("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", "tool_choice");
        return null;
    }
    const functions = wireTools.map((tool, index): ChatToolFunction => {
        const param = `tools[${index}]`;
        if (!isJsonObject(tool) || tool.type !== "function")
            throw ApiError.invalidRequest(`Invalid value for '${param}.type': only tools of type 'function' are supported.`, `${param}.type`);
        const fn = tool.function;
        if (!isJsonObject(fn))
            throw ApiError.invalidRequest(`Missing required parameter: '${param}.function'.`, `${param}.function`);
        if (typeof fn.name !== "string" || !functionName.test(fn.name))
            throw ApiError.invalidRequest(`Invalid '${param}.function.name': expected 1 to 64 characters a-z, A-Z, 0-9, '_' or '-'.`, `${param}.function.name`);
        if (fn.description != null && typeof fn.description !== "string")
            throw ApiError.invalidRequest(`Invalid type for '${param}.function.description': expected a string.`, `${param}.function.description`);
        if (fn.parameters != null && !isJsonObject(fn.parameters))
            throw ApiError.invalidRequest(`Invalid type for '${param}.function.parameters': expected a JSON schema object.`, `${param}.function.parameters`);
        return {
            name: fn.name,
            ...(fn.description == null ? {} : {description: fn.description as string}),
            parameters: (fn.parameters as Record<string, unknown> | undefined) ?? {type: "object", properties: {}}
        };
    });
    const names = functions.map((fn) => fn.name);
    const duplicate = names.findIndex((name, index) => names.indexOf(name) !== index);
    if (duplicate >= 0)
        throw ApiError.invalidRequest(`Duplicate function name '${names[duplicate]}' in 'tools'.`, `tools[${duplicate}].function.name`);

    let forced: number[];
    if (choice === "none" || choice === "auto")
        forced = [];
    else if (choice === "required")
        forced = functions.map((_fn, index) => index);
    else if (isJsonObject(choice) && choice.type === "function" && isJsonObject(choice.function) && typeof choice.function.name === "string") {
        const index = names.indexOf(choice.function.name);
        if (index < 0)
            throw ApiError.invalidRequest(
                `Invalid value for 'tool_choice': no function named '${choice.function.name}' in 'tools'.`, "tool_choice");
        forced = [index];
    } else
        throw ApiError.invalidRequest(
            "Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or {\"type\": \"function\", \"function\": {\"name\": ...}}.",
            "tool_choice");

    if (choice === "none" || choice === "auto")
        return {functions, choice: {type: choice}};
    return {
        functions,
        choice: {
            type: "forced",
            functions: forced.map((index) => ({
                name: functions[index].name,
                schema: checkJsonSchema(functions[index].parameters, `tools[${index}].function.parameters`)
            })),
            parallel: request.parallel_tool_calls !== false
        }
    };
}

/** Messages -> turns: `tool` messages become the results of the calls of the assistant message before them. */
function toTurns(messages: readonly WireMessage[], engine: ChatEngineInfo, parsedArguments: ParsedArguments): ChatTurn[] {
    const turns: ChatTurn[] = [];
    // Calls of the last assistant message that still wait for their `tool` message, by id.
    let waiting = new Map<string, ChatToolCallTurn>();
    let waitingFrom = -1;
    const checkAnswered = () => {
        if (waiting.size > 0)
            throw ApiError.invalidRequest(
                `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. Missing: ${[...waiting.keys()].join(", ")}.`,
                `messages[${waitingFrom}].tool_calls`);
    };
    messages.forEach((message, index) => {
        const param = `messages[${index}]`;
        if (engine.toolCallFormat != null && message.role === "tool") {
            const call = message.tool_call_id == null ? undefined : waiting.get(message.tool_call_id);
            if (call == null)
                throw ApiError.invalidRequest(
                    `Invalid '${param}.tool_call_id': a 'tool' message must answer a tool call of the assistant message before it.`, `${param}.tool_call_id`);
            waiting.delete(message.tool_call_id!);
            const result = toTurn({...message, role: "user"}, index, engine.id);
            if (result.images != null)
                throw ApiError.invalidRequest(`Invalid '${result.images[0].image.source}': a tool message's content may not carry images.`, `${result.images[0].image.source}.type`);
            call.result = result.content;
            return;
        }
        checkAnswered();
        const turn = toTurn(message, index, engine, parsedArguments);
        if (message.role === "assistant" && typeof message.reasoning_content === "string" && message.reasoning_content !== "")
            turn.reasoning = message.reasoning_content;
        if (turn.toolCalls != null) {
            waiting = new Map(turn.toolCalls.map((call, callIndex) => [toolCallIds(message)[callIndex], call]));
            waitingFrom = index;
        }
        turns.push(turn);
    });
    checkAnswered();
    return turns;
}

function toolCallIds(message: WireMessage): string[] {
    return (message.tool_calls as {id: string}[]).map((call) => call.id);
}

function toToolCalls(message: WireMessage, param: string, parsedArguments: ParsedArguments): ChatToolCallTurn[] {
    if (!Array.isArray(message.tool_calls))
        throw ApiError.invalidRequest(`Invalid type for '${param}.tool_calls': expected an array.`, `${param}.tool_calls`);
    const ids = new Set<string>();
    return message.tool_calls.map((call: unknown, index) => {
        const at = `${param}.tool_calls[${index}]`;
        if (!isJsonObject(call) || typeof call.id !== "string" || call.id === "" || call.type !== "function" || !isJsonObject(call.function)
            || typeof call.function.name !== "string" || typeof call.function.arguments !== "string")
            throw ApiError.invalidRequest(
                `Invalid '${at}': expected {id, type: 'function', function: {name, arguments}} with string id, name and arguments.`, at);
        if (ids.has(call.id))
            throw ApiError.invalidRequest(`Duplicate tool call id '${call.id}' in '${param}.tool_calls'.`, `${at}.id`);
        ids.add(call.id);
        const refused = parsedArguments.refusals.get(call.function);
        if (refused != null)
            throw ApiError.invalidRequest(`Invalid '${at}.function.arguments': ${refused}.`, `${at}.function.arguments`);
        let args: unknown = parsedArguments.values.get(call.function);
        if (!parsedArguments.values.has(call.function))
            try {
                args = JSON.parse(call.function.arguments);
            } catch {
                throw ApiError.invalidRequest(`Invalid '${at}.function.arguments': not valid JSON.`, `${at}.function.arguments`);
            }
        return {name: call.function.name, arguments: args, result: ""};
    });
}

function toTurn(message: WireMessage, index: number, engine: ChatEngineInfo | string, parsedArguments = new ParsedArguments()): ChatTurn {
    const param = `messages[${index}]`;
    const modelId = typeof engine === "string" ? engine : engine.id;
    const toolSupport = typeof engine !== "string" && engine.toolCallFormat != null;
    const why = toolSupport ? "(deprecated function calling; use 'tool' messages)" : `(the model '${modelId}' has no tool support)`;
    if (message.role === "tool" || message.role === "function")
        throw ApiError.invalidRequest(`Messages with role '${message.role}' are not supported ${why}.`,
            `${param}.role`, "unsupported_parameter");
    if (message.role === "assistant" && (message.function_call != null || (message.tool_calls != null && !toolSupport)))
        throw ApiError.invalidRequest(`Assistant messages with tool calls are not supported ${why}.`,
            `${param}.${message.function_call != null ? "function_call" : "tool_calls"}`, "unsupported_parameter");
    const toolCalls = message.role === "assistant" && message.tool_calls != null ? toToolCalls(message, param, parsedArguments) : undefined;
    if (toolCalls != null && toolCalls.length > 0) {
        const text = message.content == null ? "" : toTurn({...message, tool_calls: undefined}, index, engine).content;
        return {role: "assistant", content: text, toolCalls};
    }

    const role = message.role === "developer" ? "system" : message.role;
    if (message.content == null) {
        if (role === "assistant")
            return {role, content: ""};
        throw ApiError.invalidRequest(`Missing required parameter: '${param}.content'.`, `${param}.content`);
    }
    if (typeof message.content === "string")
        return {role, content: message.content};

    let content = "";
    const images: TurnImage[] = [];
    message.content.forEach((part, partIndex) => {
        const partParam = `${param}.content[${partIndex}]`;
        if (part.type === "text")
            content += part.text!;
        else if (part.type === "image_url") {
            if (message.role !== "user")
                throw ApiError.invalidRequest(`Invalid '${partParam}': only user messages may carry images, not '${message.role}' messages.`, `${partParam}.type`);
            images.push({image: toPartImage(part, partParam), offset: content.length});
        } else if (part.type === "input_audio" || part.type === "file")
            throw ApiError.invalidRequest(
                `'${part.type}' content parts are not supported by this server (no audio input, no Files API): send text, and images inline as base64 'data:' URLs.`,
                `${partParam}.type`, "unsupported_content_part");
        else
            throw ApiError.invalidRequest(`Invalid content part type '${part.type}': supported are 'text' and 'image_url'.`, `${partParam}.type`);
    });
    return images.length === 0 ? {role, content} : {role, content, images};
}

/** A chat `image_url` part's image (its `detail` accepted; the URL a base64 `data:` URL). */
function toPartImage(part: WireContentPart, partParam: string) {
    const imageUrl = part.image_url;
    if (!isJsonObject(imageUrl) || typeof imageUrl.url !== "string")
        throw ApiError.invalidRequest(`Missing required parameter: '${partParam}.image_url.url'.`, `${partParam}.image_url.url`);
    return imageFromUrl(imageUrl.url, imageUrl.detail, `${partParam}.image_url.url`, partParam);
}

/**
 * A job's images within the request's bound, and only for a model that sees: a text-only model's refusal names the first
 * image's part and the served models that take images (`visionModels`), or says that none is served.
 */
function checkImages(turns: readonly ChatTurn[], engine: ChatEngineInfo, visionModels: readonly string[]) {
    const images = turns.flatMap((turn) => turn.images ?? []);
    if (images.length === 0)
        return;
    if (engine.vision !== true)
        throw ApiError.invalidRequest(
            `The model '${engine.id}' does not take images (it is a text-only model); ${visionModels.length === 0
                ? "no model this server serves takes images"
                : `models served here that do: ${visionModels.map((id) => `'${id}'`).join(", ")}`}.`,
            images[0].image.source, "model_not_multimodal");
    if (images.length > imageLimits.maxImages)
        throw ApiError.invalidRequest(
            `Too many images: the request carries ${images.length}; at most ${imageLimits.maxImages} are accepted.`,
            images[imageLimits.maxImages].image.source, "too_many_images");
}

