import { LlamaText, SpecialTokensText } from "node-llama-cpp";

/** One render of a chat template by node-llama-cpp's Jinja wrapper: the variables it passed and the text it got. */
export type TemplateRender = {params: Record<string, unknown>, output: string};

type JinjaMessage = {role?: unknown, content?: unknown, reasoning_content?: unknown, tool_calls?: unknown};

/**
 * The conversation with the template's own generation prompt at its end, in place of what node-llama-cpp's Jinja
 * wrapper put there; null when the wrapper's text is to be kept.
 *
 * The wrapper (3.21.1, 3.22.1) never renders `add_generation_prompt`: it renders the reply to come as the template's last
 * assistant message, with a placeholder for its content, and cuts the text at that placeholder. Templates whose
 * last assistant turn is not their generation prompt then get another prompt than the model was trained on:
 * Qwen3 writes a closed, empty think block into that turn (`<think>\n\n</think>\n\n`) whatever `enable_thinking`
 * says, gpt-oss opens the final channel, Qwen3-2507 and QwQ lose their opening `<think>\n`, GLM-4.5 gets an open
 * `<think>` and no `/nothink` switch.
 *
 * `render` is the wrapper's render of the conversation (the messages with placeholders for their contents, the
 * last one the empty reply); the template is rendered again with the same variables, without that last message
 * and with `add_generation_prompt: true` (the reference rendering, as transformers and llama.cpp do it). Both
 * renders share the text up to the end of the last placeholder before the reply; what follows it is the part
 * replaced, which in the wrapper's text is its last piece of template text. When the last message is not such a
 * reply (`newTurn` false: the wrapper continues an assistant message after tool results it wrote as that message's
 * text, ending with the template's closed turn as it learnt it from the template), continuedWithGenerationPrompt
 * does it. Kept as it is (null) when the renders do not line up that way.
 */
export function withGenerationPrompt(contextText: LlamaText, render: TemplateRender, newTurn: boolean,
    renderTemplate: (params: Record<string, unknown>) => string): LlamaText | null {
    const messages = render.params.messages;
    if (!Array.isArray(messages) || messages.length < 2)
        return null;
    const earlier = messages.slice(0, -1) as JinjaMessage[];
    const reply = messages.at(-1) as JinjaMessage;
    // After tool results the reply is an empty assistant message of its own (templates with tool support).
    if (reply.role !== "assistant" || (Array.isArray(reply.tool_calls) && reply.tool_calls.length > 0))
        return null;
    if (!(newTurn || earlier.at(-1)?.role === "tool"))
        return continuedWithGenerationPrompt(contextText, render, renderTemplate);
    const placeholder = [reply.content, reply.reasoning_content].find((value): value is string => typeof value === "string" && value !== "" && render.output.includes(value));
    if (placeholder == null)
        return null;
    const closedTurn = render.output.slice(0, render.output.lastIndexOf(placeholder));
    const placeholders = [
        ...earlier.flatMap((message) => [message.content, message.reasoning_content]),
        render.params.bos_token, render.params.eos_token, render.params.eot_token
    ].filter((value): value is string => typeof value === "string" && value !== "");
    const shared = Math.max(0, ...placeholders.map((id) => {
        const at = closedTurn.lastIndexOf(id);
        return at === -1 ? 0 : at + id.length;
    }));
    let open: string;
    try {
        open = renderTemplate({...render.params, messages: earlier, add_generation_prompt: true});
    } catch {
        return null;
    }
    const generationPrompt = open.slice(shared);
    if (!open.startsWith(closedTurn.slice(0, shared)) || placeholders.some((id) => generationPrompt.includes(id)))
        return null;
    // The wrapper's text ends with the template text after the last placeholder (then the reply's empty content),
    // as the wrapper wrote it (it may have taken an empty think block out); when the messages before hold empty
    // content, the template text around them is joined to it in one piece, of which only that end is replaced.
    const values = [...contextText.values];
    while (values.length > 0 && values.at(-1) === "")
        values.pop();
    const replaced = closedTurn.slice(shared);
    if (replaced !== "") {
        const last = values.at(-1);
        if (!(last instanceof SpecialTokensText))
            return null;
        if (last.value.endsWith(replaced))
            values[values.length - 1] = new SpecialTokensText(last.value.slice(0, last.value.length - replaced.length));
        else
            values.pop();
    }
    return LlamaText([...values, new SpecialTokensText(generationPrompt)]);
}

const probeUser = "Uq3probeUserTextq3U";
const probeReply = "Rq3probeReplyTextq3R";

/**
 * A response continued after tool results (the wrapper writes calls and results as the assistant message's text in
 * the template's own format): that text ends with the template's opening of a reply as the last assistant turn
 * renders it, which becomes the generation prompt. The two are learnt from the template on a probe conversation (a
 * user message, then a reply or the generation prompt) with the request's variables; null when the text does not
 * end that way or they are the same.
 */
function continuedWithGenerationPrompt(contextText: LlamaText, render: TemplateRender, renderTemplate: (params: Record<string, unknown>) => string): LlamaText | null {
    let closed: string;
    let open: string;
    try {
        const replied = renderTemplate({...render.params, messages: [{role: "user", content: probeUser}, {role: "assistant", content: probeReply}]});
        const prompted = renderTemplate({...render.params, messages: [{role: "user", content: probeUser}], add_generation_prompt: true});
        const userEnd = prompted.indexOf(probeUser) + probeUser.length;
        if (userEnd < probeUser.length || replied.indexOf(probeUser) + probeUser.length !== userEnd || !replied.includes(probeReply))
            return null;
        closed = replied.slice(userEnd, replied.indexOf(probeReply));
        open = prompted.slice(userEnd);
    } catch {
        return null;
    }
    const values = [...contextText.values];
    const last = values.at(-1);
    if (closed === open || closed === "" || !(last instanceof SpecialTokensText) || !last.value.endsWith(closed))
        return null;
    values[values.length - 1] = new SpecialTokensText(last.value.slice(0, -closed.length) + open);
    return LlamaText(values);
}
