import { ApiError } from "../../../core/http/ApiError.js";
import type { CustomTool, FunctionTool, InputItem, ResponseCreateRequest, ResponseWarning, Tool, ToolChoice } from "./ResponsesWire.js";

/**
 * The tools OpenAI runs itself (`ToolChoiceTypes` and the built-in `Tool` types of the `openai` package), which a local
 * server cannot: the model is not offered them (an agent that offers web search still works without it), and a
 * `tool_choice` that forces one is refused. `local_shell`, `shell` and `apply_patch` are run by the client, but in formats
 * only OpenAI's models are trained on; they are treated the same way.
 */
const builtInToolTypes: ReadonlySet<string> = new Set([
    "web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11", "file_search", "code_interpreter",
    "computer", "computer_use", "computer_use_preview", "image_generation", "mcp", "local_shell", "shell", "apply_patch",
    "tool_search", "programmatic_tool_calling"
]);

/** What a call of a tool becomes on the wire: a `function_call` or a `custom_tool_call` item, with its namespace if it has one. */
export type ToolIdentity = {kind: "function" | "custom", name: string, namespace?: string};

/** A function as chat completions offers it to the model. */
export type ChatTool = {type: "function", function: {name: string, description?: string, parameters: Record<string, unknown>}};

export type OfferedTools = {
    /** The model's tools, as chat completions tools. */
    tools: ChatTool[];
    /** The field each of `tools` came from (`tools[2]`, `tools[4].tools[1]`, `input[0].tools[3]`), to name it in errors. */
    sources: string[];
    /** By the name the model sees: what its calls become. */
    byName: ReadonlyMap<string, ToolIdentity>;
    /** `tool_choice` in chat completions' terms (absent: the default). */
    choice?: unknown;
    /** The built-in tools left out, one note each. */
    warnings: ResponseWarning[];
};

const modelNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

/** The name the model sees for a tool: its own, or `namespace__name` inside a namespace. */
export function modelToolName(name: string, namespace?: string): string {
    return namespace == null ? name : `${namespace}__${name}`;
}

/**
 * The tools the model is offered: the request's `tools` and those of `additional_tools` input items (the conversation's
 * and the new input's), namespaces flattened (`namespace__name`), custom tools as functions of one string argument
 * `input`, built-in tools left out with a warning; and `tool_choice` resolved against them. Pure.
 */
export function toOfferedTools(request: ResponseCreateRequest, history: readonly InputItem[], input: readonly InputItem[]): OfferedTools {
    const offered: Collected = {tools: [], sources: [], byName: new Map(), warnings: [], dropped: []};
    const lists: [string, readonly Tool[]][] = [
        ...history.flatMap((item): [string, readonly Tool[]][] => item.type === "additional_tools" ? [["previous_response_id", item.tools]] : []),
        ["tools", request.tools ?? []],
        ...input.flatMap((item, index): [string, readonly Tool[]][] => item.type === "additional_tools" ? [[`input[${index}].tools`, item.tools]] : [])
    ];
    for (const [base, tools] of lists)
        for (const [index, tool] of tools.entries())
            addTool(offered, tool, base === "previous_response_id" ? base : `${base}[${index}]`);
    const {tools, sources, byName, warnings} = offered;
    return {tools, sources, byName, warnings, ...toChoice(request.tool_choice, offered)};
}

/** The tools gathered so far, and the types of the built-in ones left out. */
type Collected = {tools: ChatTool[], sources: string[], byName: Map<string, ToolIdentity>, warnings: ResponseWarning[], dropped: string[]};

function addTool(offered: Collected, tool: Tool, param: string) {
    const add = (source: string, chat: ChatTool, identity: ToolIdentity) => {
        offered.tools.push(chat);
        offered.sources.push(source);
        offered.byName.set(chat.function.name, identity);
    };
    if (tool.type === "function" || tool.type === "custom") {
        const named = tool as FunctionTool | CustomTool;
        add(param, toChatTool(named, named.name), {kind: named.type, name: named.name});
    } else if (tool.type === "namespace" && "tools" in tool) {
        for (const [index, inner] of tool.tools.entries()) {
            const name = modelToolName(inner.name, tool.name);
            if (!modelNamePattern.test(name))
                throw ApiError.invalidRequest(
                    `Invalid 'tools' of namespace '${tool.name}': its tool '${inner.name}' is offered to the model as '${name}', which must be 1 to 64 characters a-z, A-Z, 0-9, '_' or '-'.`,
                    `${param}.tools[${index}].name`);
            add(`${param}.tools[${index}]`, toChatTool(inner, name, tool.description), {kind: inner.type, name: inner.name, namespace: tool.name});
        }
    } else if (builtInToolTypes.has(tool.type)) {
        offered.dropped.push(tool.type);
        offered.warnings.push({type: "unsupported_tool", param,
            message: `The built-in tool '${tool.type}' is not available on this server; it was left out of the model's tools.`});
    } else
        throw ApiError.invalidRequest(`Unknown tool type '${tool.type}': supported are 'function', 'custom' and 'namespace' (built-in tools are left out).`,
            `${param}.type`, "unsupported_tool");
}

/** A function, or a custom tool as a function whose one argument `input` is its free text; a namespace's description before its tools' own. */
function toChatTool(tool: FunctionTool | CustomTool, name: string, namespaceDescription?: string): ChatTool {
    const description = [namespaceDescription, tool.description].filter((text) => text != null && text !== "").join("\n\n");
    const parameters = tool.type === "function" ? tool.parameters ?? {type: "object", properties: {}} : {
        type: "object", required: ["input"], additionalProperties: false,
        properties: {input: {type: "string", description: tool.format?.type === "grammar"
            ? `The tool's input, as text matching this ${tool.format.syntax} grammar:\n${tool.format.definition}`
            : "The tool's input, as free text."}}
    };
    return {type: "function", function: {name, ...(description !== "" ? {description} : {}), parameters}};
}

/**
 * `tool_choice` against the offered tools: a function or custom tool by its name (a namespaced one by its own name
 * when no other tool has it, else as `namespace__name`); `allowed_tools` keeps only the tools it lists; forcing a
 * built-in tool (or `required` when only built-in tools were given) is a 400.
 */
function toChoice(choice: ToolChoice | undefined, offered: Collected): {choice?: unknown, tools?: ChatTool[], sources?: string[]} {
    if (choice == null || choice === "auto" || choice === "none")
        return choice == null ? {} : {choice};
    if (choice === "required") {
        if (offered.tools.length === 0 && offered.dropped.length > 0)
            throw forcedBuiltIn("tool_choice", offered.dropped);
        return {choice};
    }
    if (choice.type === "function" || choice.type === "custom") {
        const name = (choice as {name: string}).name;
        return {choice: {type: "function", function: {name: findTool(offered.byName, choice.type, name)}}};
    }
    if (choice.type === "allowed_tools" && "mode" in choice) {
        const allowed = new Set<string>();
        for (const [index, entry] of choice.tools.entries()) {
            if (builtInToolTypes.has(entry.type))
                continue;
            if ((entry.type !== "function" && entry.type !== "custom") || entry.name == null)
                throw ApiError.invalidRequest(`Invalid 'tool_choice.tools[${index}]': expected {type: 'function' | 'custom', name} or a built-in tool type.`, `tool_choice.tools[${index}]`);
            allowed.add(findTool(offered.byName, entry.type, entry.name, `tool_choice.tools[${index}].name`));
        }
        if (allowed.size === 0 && choice.mode === "required")
            throw forcedBuiltIn("tool_choice", choice.tools.map((entry) => entry.type));
        const kept = offered.tools.flatMap((tool, index) => allowed.has(tool.function.name) ? [index] : []);
        return {choice: kept.length === 0 ? undefined : choice.mode, tools: kept.map((index) => offered.tools[index]), sources: kept.map((index) => offered.sources[index])};
    }
    if (builtInToolTypes.has(choice.type))
        throw forcedBuiltIn("tool_choice.type", [choice.type]);
    throw ApiError.invalidRequest(`Invalid value for 'tool_choice.type': '${choice.type}'. Supported are 'function', 'custom' and 'allowed_tools'.`, "tool_choice.type");
}

/** The model's name of the one `kind` tool called `name` (its own name, or `namespace__name`). */
function findTool(byName: ReadonlyMap<string, ToolIdentity>, kind: string, name: string, param = "tool_choice.name"): string {
    const found = [...byName].filter(([modelName, identity]) => identity.kind === kind && (identity.name === name || modelName === name));
    if (found.length === 1)
        return found[0][0];
    if (found.length === 0)
        throw ApiError.invalidRequest(`Invalid value for '${param}': no ${kind} tool named '${name}' in 'tools'.`, param);
    throw ApiError.invalidRequest(`Invalid value for '${param}': '${name}' is in several namespaces; name one as ${found.map(([modelName]) => `'${modelName}'`).join(" or ")}.`, param);
}

function forcedBuiltIn(param: string, types: readonly string[]) {
    return ApiError.invalidRequest(`'${param}' forces the built-in tool${types.length > 1 ? "s" : ""} '${types.join("', '")}', which this server cannot run: it runs no tools itself, only your functions and custom tools.`,
        param, "unsupported_tool");
}

/** A custom tool's input from the arguments the model wrote for it (`{"input": "..."}`; anything else as written). */
export function customToolInput(argumentsText: string): string {
    try {
        const value = JSON.parse(argumentsText) as unknown;
        if (value != null && typeof value === "object" && typeof (value as {input?: unknown}).input === "string")
            return (value as {input: string}).input;
    } catch {
        // A call cut short by max_output_tokens: its arguments as written so far.
    }
    return argumentsText;
}
