import { Template } from "@huggingface/jinja";
import { LlamaText, SpecialTokensText } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { withGenerationPrompt } from "../../src/capabilities/chat/llama/templateGenerationPrompt.js";

// What node-llama-cpp's Jinja wrapper does (messages with placeholders for their contents, the reply an empty last
// assistant message, the text cut at its placeholder, template text as special-token text) and the ending put right.
const template = "{%- for m in messages %}<|{{ m.role }}|>{% if m.role == 'assistant' %}<think></think>{% endif %}{{ m.content }}<|end|>{%- endfor %}" +
    "{%- if add_generation_prompt %}<|assistant|>{% if enable_thinking is false %}<think></think>{% endif %}{%- endif %}";
const render = (params: Record<string, unknown>) => new Template(template).render(params);

/** The wrapper's text of a render: contents for the placeholders, template text as special-token text, cut at the reply. */
function wrapperText(output: string, contents: Record<string, string>, reply: string): LlamaText {
    const values: (string | SpecialTokensText)[] = [];
    let rest = output.slice(0, output.indexOf(reply));
    for (const [id, content] of Object.entries(contents)) {
        const at = rest.indexOf(id);
        values.push(new SpecialTokensText(rest.slice(0, at)), content);
        rest = rest.slice(at + id.length);
    }
    return LlamaText([...values, new SpecialTokensText(rest)]);
}

const textOf = (text: LlamaText | null) => text?.values.map((value) => typeof value === "string" ? value : (value as SpecialTokensText).value).join("");

describe("withGenerationPrompt", () => {
    const messages = [{role: "user", content: "U1"}, {role: "assistant", content: "A1"}, {role: "user", content: "U2"}, {role: "assistant", content: "R"}];
    const contents = {U1: "Hi", A1: "Hello", U2: "Again"};

    it("puts the template's generation prompt where the wrapper rendered the reply's turn, with the request's variables", () => {
        for (const enableThinking of [true, false]) {
            const params = {messages, enable_thinking: enableThinking};
            const output = render(params);
            const fixed = withGenerationPrompt(wrapperText(output, contents, "R"), {params, output}, true, render);
            const reference = render({messages: [{role: "user", content: "Hi"}, {role: "assistant", content: "Hello"}, {role: "user", content: "Again"}],
                enable_thinking: enableThinking, add_generation_prompt: true});
            expect(textOf(fixed)).toBe(reference);
            // Message text stays plain text; only template text is special-token text.
            expect(fixed!.values.filter((value) => typeof value === "string")).toEqual(["Hi", "Hello", "Again"]);
        }
        expect(textOf(withGenerationPrompt(wrapperText(render({messages}), contents, "R"), {params: {messages}, output: render({messages})}, true, render)))
            .toMatch(/<\|user\|>Again<\|end\|><\|assistant\|>$/);
    });

    it("messages of empty content: the template text around them is one piece, and only the reply's turn is replaced", () => {
        const params = {messages, enable_thinking: true};
        const output = render(params);
        // LlamaText joins the template text around empty contents into one piece of special-token text.
        const fixed = withGenerationPrompt(wrapperText(output, {U1: "", A1: "", U2: ""}, "R"), {params, output}, true, render);
        const reference = render({messages: [{role: "user", content: ""}, {role: "assistant", content: ""}, {role: "user", content: ""}],
            enable_thinking: true, add_generation_prompt: true});
        expect(textOf(fixed)).toBe(reference);
    });

    it("leaves the text alone when the reply is not a new turn of its own, or the renders do not line up", () => {
        const params = {messages};
        const output = render(params);
        const text = wrapperText(output, contents, "R");
        // A reply continued as its text (no tool message before it) that does not end with the template's closed reply turn.
        expect(withGenerationPrompt(LlamaText([...text.values, "call: get_weather"]), {params, output}, false, render)).toBeNull();
        // The last message is not an empty assistant reply.
        expect(withGenerationPrompt(text, {params: {messages: messages.slice(0, 3)}, output}, true, render)).toBeNull();
        // A template that renders earlier messages differently with the generation prompt.
        const odd = (variables: Record<string, unknown>) => variables.add_generation_prompt === true ? "changed" + render(variables) : render(variables);
        expect(withGenerationPrompt(text, {params, output}, true, odd)).toBeNull();
        // A template that fails with the generation prompt.
        expect(withGenerationPrompt(text, {params, output}, true, () => {
            throw new Error("no");
        })).toBeNull();
    });

    it("a reply continued after tool results written as its text: the closed reply turn at its end becomes the generation prompt", () => {
        // The wrapper's own text ends with what it learnt from the template's last assistant turn.
        const params = {messages: [{role: "user", content: "U1"}, {role: "assistant", content: "R"}], enable_thinking: true};
        const output = render(params);
        const text = LlamaText([new SpecialTokensText("<|user|>"), "Weather?", new SpecialTokensText("<|end|><|assistant|><think></think>"), "call: get_weather\nresult: sunny",
            new SpecialTokensText("<|end|><|assistant|><think></think>")]);
        expect(textOf(withGenerationPrompt(text, {params, output}, false, render))).toBe("<|user|>Weather?<|end|><|assistant|><think></think>call: get_weather\nresult: sunny<|end|><|assistant|>");
    });
});
