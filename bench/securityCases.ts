/**
 * The heavy requests `npm run bench:security` sends (issue 29's chat-family attacks and the earlier ones), each
 * built once as JSON text. `stories` is stories260K (no chat template); `tools` a generated model with Qwen2.5's
 * tool-calling template (the ChatML control tokens, tools, tool calls and tool results all rendered by the template)
 * and a `date_string` line as Llama 3.1's template has (a template variable a client's `chat_template_kwargs` fills).
 */
export type SecurityCase = {name: string, route: string, body: string};

const megabytes = (count: number) => Math.floor(count * 1024 * 1024);
const filler = (bytes: number) => "The quick brown fox jumps over the lazy dog. ".repeat(Math.ceil(bytes / 45)).slice(0, bytes);
const emptyTurns = (count: number) => Array.from({length: count}, (_, index) => ({role: index % 2 === 0 ? "user" : "assistant", content: ""}));
const emptyItems = (count: number) => Array.from({length: count}, (_, index) => ({role: index % 2 === 0 ? "user" : "assistant", content: ""}));
const hi = [{role: "user", content: "hi"}];
const bigTool = (field: "description" | "parameters") => ({
    type: "function",
    function: field === "description"
        ? {name: "lookup", description: filler(megabytes(9)), parameters: {type: "object", properties: {}}}
        : {name: "lookup", parameters: {type: "object", properties: {query: {type: "string", description: filler(megabytes(9))}}}}
});

function chatCase(name: string, body: Record<string, unknown>): SecurityCase {
    return {name, route: "/v1/chat/completions", body: JSON.stringify({max_tokens: 1, ...body})};
}

/** The cases, built lazily (several hold 9 MB bodies). */
export function securityCases(): (() => SecurityCase)[] {
    const bigPrompt = filler(megabytes(9.9));
    const bigEnum = {type: "object", properties: {pick: {type: "string", enum: Array.from({length: 40_000}, (_, index) => `value-${index}`)}}, required: ["pick"]};
    return [
        () => chatCase("chat, 9.9 MB prompt (stories)", {model: "stories", messages: [{role: "user", content: bigPrompt}]}),
        () => ({name: "completions, 9.9 MB prompt (stories)", route: "/v1/completions", body: JSON.stringify({model: "stories", prompt: bigPrompt, max_tokens: 1})}),
        () => chatCase("chat, 40,000-value enum (stories)", {model: "stories", messages: [{role: "user", content: "pick"}], max_tokens: 4,
            response_format: {type: "json_schema", json_schema: {name: "pick", schema: bigEnum}}}),
        () => chatCase("chat, 300 KB prompt, refused after tokenizing", {model: "tools", messages: [{role: "user", content: filler(300_000)}]}),
        () => ({name: "count_tokens, 300 KB prompt", route: "/v1/messages/count_tokens",
            body: JSON.stringify({model: "tools", messages: [{role: "user", content: filler(300_000)}]})}),
        () => ({name: "tokenize, 1 MB text with pieces (tools)", route: "/v1/tokenize",
            body: JSON.stringify({model: "tools", content: filler(megabytes(1)), with_pieces: true})}),
        () => chatCase("chat, 10,000 empty messages", {model: "tools", messages: emptyTurns(10_000)}),
        () => chatCase("chat, 16,000 empty messages", {model: "tools", messages: emptyTurns(16_000)}),
        () => chatCase("chat, 32,000 empty messages", {model: "tools", messages: emptyTurns(32_000)}),
        () => chatCase("chat, 250,000 empty messages", {model: "tools", messages: emptyTurns(250_000)}),
        () => ({name: "count_tokens, 250,000 empty messages", route: "/v1/messages/count_tokens", body: JSON.stringify({model: "tools", messages: emptyTurns(250_000)})}),
        () => ({name: "responses, 250,000 empty messages", route: "/v1/responses", body: JSON.stringify({model: "tools", input: emptyItems(250_000), max_output_tokens: 1})}),
        () => ({name: "responses, 400,000 reasoning items", route: "/v1/responses",
            body: JSON.stringify({model: "tools", input: [...Array.from({length: 400_000}, () => ({type: "reasoning"})), {role: "user", content: "hi"}], max_output_tokens: 1})}),
        () => chatCase("chat, kwargs 300,000-element array", {model: "tools", messages: hi, chat_template_kwargs: {unread: Array(300_000).fill(0)}}),
        () => chatCase("chat, kwargs 4.5M-element array (9 MB)", {model: "tools", messages: hi, chat_template_kwargs: {unread: Array(4_500_000).fill(0)}}),
        () => chatCase("chat, kwargs 9 MB string the template renders", {model: "tools", messages: hi, chat_template_kwargs: {date_string: filler(megabytes(9))}}),
        () => chatCase("chat, kwargs 9 MB tools", {model: "tools", messages: hi, chat_template_kwargs: {tools: [bigTool("description")]}}),
        () => chatCase("chat, 9 MB tool description", {model: "tools", messages: hi, tools: [bigTool("description")]}),
        () => chatCase("chat, 9 MB tool parameters", {model: "tools", messages: hi, tools: [bigTool("parameters")]}),
        () => chatCase("chat, 9 MB tool-call arguments", {model: "tools", tools: [{type: "function", function: {name: "lookup"}}], messages: [
            ...hi,
            {role: "assistant", content: null, tool_calls: [{id: "call_1", type: "function", function: {name: "lookup", arguments: JSON.stringify({query: filler(megabytes(9))})}}]},
            {role: "tool", tool_call_id: "call_1", content: "done"}
        ]}),
        () => ({name: "responses, 9 MB function_call arguments", route: "/v1/responses", body: JSON.stringify({model: "tools", max_output_tokens: 1, input: [
            {role: "user", content: "hi"},
            {type: "function_call", call_id: "call_1", name: "lookup", arguments: JSON.stringify({query: filler(megabytes(9))})},
            {type: "function_call_output", call_id: "call_1", output: "done"}
        ]})}),
        () => ({name: "responses, 9 MB tool description", route: "/v1/responses",
            body: JSON.stringify({model: "tools", max_output_tokens: 1, input: "hi", tools: [{type: "function", name: "lookup", description: filler(megabytes(9)), parameters: {type: "object", properties: {}}}]})}),
        () => ({name: "messages, 9 MB tool description", route: "/v1/messages",
            body: JSON.stringify({model: "tools", max_tokens: 1, messages: hi, tools: [{name: "lookup", description: filler(megabytes(9)), input_schema: {type: "object", properties: {}}}]})}),
        () => ({name: "count_tokens, 9 MB tool description", route: "/v1/messages/count_tokens",
            body: JSON.stringify({model: "tools", messages: hi, tools: [{name: "lookup", description: filler(megabytes(9)), input_schema: {type: "object", properties: {}}}]})})
    ];
}
