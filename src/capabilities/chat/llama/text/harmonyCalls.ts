import type { ToolCallFormat } from "../../ChatEngine.js";

/**
 * gpt-oss's tool calls (OpenAI's harmony format). A call is a message of its own, addressed to the function in its
 * header, its arguments the message, its end `<|call|>` (an end of generation):
 * `<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>` as the model
 * writes it, `<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{...}<|call|>` as the template
 * renders a past one (the recipient before or after the channel, `<|constrain|>` or not: both are read).
 *
 * HarmonySplitter hands such a message on as answer text in this one form, `harmonyCallFormat` (the way the model
 * writes it), which the call parser then reads like any template's calls. One call per message: a response makes one
 * call and ends (`<|call|>`), so parallel calls are never generated.
 */
export const harmonyCallFormat: ToolCallFormat = {
    prefix: "<|channel|>commentary to=functions.", paramsPrefix: " <|constrain|>json<|message|>", suffix: "<|call|>", betweenCalls: "",
    forcedOpening: "<|channel|>commentary to=functions."
};

/** The function a harmony message header (what precedes its `<|message|>`) addresses, or null when it is not a call. */
export function harmonyRecipient(header: string): string | null {
    return /\bto=functions\.([^\s<]+)/.exec(header)?.[1] ?? null;
}

/** A template written in harmony (gpt-oss's): its calls are messages addressed `to=functions.NAME`, ended by `<|call|>`. */
export function isHarmonyTemplate(template: string): boolean {
    return ["<|channel|>", " to=", "functions.", "<|call|>"].every((piece) => template.includes(piece));
}
