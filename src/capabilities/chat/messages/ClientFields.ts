import { ApiError } from "../../../core/http/ApiError.js";
import { ContextLengthExceededError } from "../errors/ContextLengthExceededError.js";

/**
 * Where a chat message came from in the Messages request: its path, for an assistant's calls each `tool_use` block's,
 * and for a message of content parts (a user turn with images) each part's block.
 */
export type MessageSource = {path: string, toolCalls?: string[], parts?: string[]};

/**
 * The way back from the chat request a Messages request was turned into to the fields the client sent: the
 * shared chat code's errors name chat fields (`messages[3].tool_calls[0].function.arguments`,
 * `tools[2].function.parameters`), which this turns into the client's (`messages.5.content.1.input`,
 * `tools.4.input_schema`), with Anthropic's dotted paths.
 */
export class ClientFields {
    /** `sources[i]`: chat message i's origin; `toolIndexes[k]`: chat tool k's index in the client's `tools`. */
    constructor(private readonly sources: readonly MessageSource[], private readonly toolIndexes: readonly number[]) {}

    /** A chat request's field as the client's. */
    of(param: string): string {
        let match: RegExpExecArray | null;
        if ((match = /^messages\[(\d+)\](.*)$/.exec(param)) != null)
            return this.ofMessage(this.sources[Number(match[1])], match[2]);
        if ((match = /^tools\[(\d+)\](.*)$/.exec(param)) != null) {
            const tool = `tools.${this.toolIndexes[Number(match[1])] ?? match[1]}`;
            const rest = /^\.function\.parameters(.*)$/.exec(match[2]);
            if (rest != null)
                return `${tool}.input_schema${dotted(rest[1])}`;
            const field = /^\.function\.(name|description)$/.exec(match[2]);
            return field != null ? `${tool}.${field[1]}` : tool;
        }
        if ((match = /^response_format\.json_schema\.schema(.*)$/.exec(param)) != null)
            return `output_config.format.schema${dotted(match[1])}`;
        const renamed: Record<string, string> = {
            response_format: "output_config.format", stop: "stop_sequences", user: "metadata.user_id",
            parallel_tool_calls: "tool_choice.disable_parallel_tool_use", max_completion_tokens: "max_tokens"
        };
        return renamed[param] ?? dotted(param);
    }

    /**
     * Whatever the chat path threw for this request, as the error the client sees: its `param` and the field
     * names quoted in its message turned into the client's, and a prompt too long for the context worded as
     * Anthropic words it (`prompt is too long: N tokens > M maximum`, which Claude Code reads to compact).
     */
    error(thrown: unknown, toApiError: (error: unknown) => ApiError): ApiError {
        if (thrown instanceof ContextLengthExceededError)
            return promptTooLong(thrown);
        const error = toApiError(thrown);
        if (error.param == null)
            return error;
        const message = error.message.replace(/'([a-z_]+(?:\[\d+\]|\.[A-Za-z0-9_$-]+)*)'/g, (_quoted, field: string) => `'${this.of(field)}'`);
        return new ApiError(error.status, error.type, message, {code: error.code, param: this.of(error.param), headers: error.headers});
    }

    private ofMessage(source: MessageSource | undefined, rest: string): string {
        if (source == null)
            return "messages";
        if (!source.path.startsWith("messages."))
            return source.path;
        const call = /^\.tool_calls\[(\d+)\](.*)$/.exec(rest);
        if (call != null) {
            const block = source.toolCalls?.[Number(call[1])];
            if (block == null)
                return source.path;
            const field = /^\.function\.(arguments|name)/.exec(call[2]);
            return field == null ? block : `${block}.${field[1] === "arguments" ? "input" : "name"}`;
        }
        if (rest === ".tool_call_id")
            return `${source.path}.tool_use_id`;
        const part = /^\.content\[(\d+)\](.*)$/.exec(rest);
        const block = part == null ? undefined : source.parts?.[Number(part[1])];
        if (block != null)
            return part![2].startsWith(".image_url") ? `${block}.source` : block;
        if (rest.startsWith(".content") || rest.startsWith(".tool_calls"))
            return `${source.path}.content`;
        return source.path;
    }
}

/** `[0].a[1]` -> `.0.a.1`: Anthropic's paths are dotted. */
function dotted(path: string): string {
    return path.replace(/\[(\d+)\]/g, ".$1");
}

/** A prompt too long for the context as Anthropic words it (`prompt is too long: N tokens > M maximum`, which Claude Code reads to compact). */
export function promptTooLong(error: ContextLengthExceededError): ApiError {
    return new ApiError(400, "invalid_request_error",
        `prompt is too long: ${error.atLeast ? "at least " : ""}${error.promptTokens} tokens > ${error.contextSize} maximum`, {code: "context_length_exceeded"});
}
