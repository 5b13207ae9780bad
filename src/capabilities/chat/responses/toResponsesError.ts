import { ApiError } from "../../../core/http/ApiError.js";
import type { MessageSource, ResponsesFields } from "./toChatRequest.js";

/** Chat completions' top-level fields that have another name in a Responses request. */
const renamed: [RegExp, string][] = [
    [/^response_format\.json_schema(?=\.schema)/, "text.format"],
    [/^response_format(\.json_schema)?/, "text.format"],
    [/^max_completion_tokens|^max_tokens/, "max_output_tokens"],
    [/^reasoning_effort/, "reasoning.effort"],
    [/^logprobs/, "include"],
    [/^messages$/, "input"]
];

/** A field of the chat request (`messages[4].tool_calls[1].function.arguments`) as the Responses field the client sent (`input[6].arguments`). */
export function toResponsesParam(param: string, fields: ResponsesFields): string {
    const message = /^messages\[(\d+)\](.*)$/.exec(param);
    if (message != null) {
        const source = fields.messages[Number(message[1])];
        return source == null ? "input" : messageField(source, message[2]);
    }
    const tool = /^tools\[(\d+)\](.*)$/.exec(param);
    if (tool != null) {
        const source = fields.tools[Number(tool[1])];
        return source == null ? "tools" : source + tool[2].replace(/^\.function(?=\.|$)/, "");
    }
    for (const [pattern, name] of renamed)
        if (pattern.test(param))
            return param.replace(pattern, name);
    return param;
}

function messageField(source: MessageSource, rest: string): string {
    const call = /^\.tool_calls\[(\d+)\](.*)$/.exec(rest);
    if (call != null) {
        const item = source.calls?.[Number(call[1])];
        if (item == null)
            return source.param;
        const field = call[2] === ".function.arguments" ? `.${item.arguments}` : call[2] === ".function.name" ? ".name" : call[2] === ".id" ? ".call_id" : "";
        return item.param + field;
    }
    if (rest.startsWith(".tool_calls"))
        return source.calls?.[0]?.param ?? source.param;
    if (rest === ".tool_call_id")
        return `${source.param}.call_id`;
    if (rest.startsWith(".content"))
        return `${source.param}.${source.content ?? "content"}${rest.slice(".content".length).replace(/\.image_url\.url$/, ".image_url")}`;
    if (rest === ".role")
        return `${source.param}.${source.content === "output" ? "type" : "role"}`;
    return source.param;
}

/** Fields of the chat request as they appear in error messages (quoted or not). */
const fieldInText = /\b(?:messages|tools)\[\d+\](?:\.[A-Za-z_$][\w$-]*|\[\d+\])*|\bresponse_format(?:\.\w+)*|\bmax_completion_tokens\b|\breasoning_effort\b|'messages'/g;

/**
 * An error of the chat path (toChatJob's checks, the engine's refusals) as the client of the Responses API must see it:
 * its `param` and the fields its message quotes named as in the Responses request. Errors that name no field pass
 * unchanged, as `thrown` (so an unexpected one is logged as such).
 */
export function toResponsesError(error: unknown, fields: ResponsesFields, thrown: unknown = error): unknown {
    if (!(error instanceof ApiError) || error.param == null)
        return thrown;
    const message = error.message.replace(fieldInText, (field) => field === "'messages'" ? "'input'" : toResponsesParam(field, fields))
        // The context's overflow, in the Responses API's words (it has an input, not messages).
        .replace(/\byour messages resulted in\b/, "your input resulted in").replace(/\bthe length of the messages\b/, "the length of the input");
    return new ApiError(error.status, error.type, message, {code: error.code, param: toResponsesParam(error.param, fields), headers: error.headers});
}
