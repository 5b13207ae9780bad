import type { LlamaModel } from "node-llama-cpp";
import type { ReasoningFormat } from "../ChatEngine.js";

/**
 * A thinking model's format, from its template or its vocabulary: harmony (gpt-oss: `<|channel|>`), Gemma 4's
 * (`<|channel>thought` ... `<channel|>`), Mistral's (`[THINK]` ... `[/THINK]`), Seed-OSS's (`<seed:think>` ... `</seed:think>`),
 * Tencent Hy3's (`<think:opensource>` ... `</think:opensource>`), Apriel-1.6's (`Here are my reasoning steps:` ...
 * `[BEGIN FINAL RESPONSE]`), or think tags
 * (`<think>`/`</think>`: Qwen3, DeepSeek-R1 distills, QwQ, ...); null for another model.
 */
export function detectReasoningFormat(model: LlamaModel): ReasoningFormat | null {
    const template = model.fileInfo.metadata.tokenizer?.chat_template ?? "";
    const pieces: readonly string[] = model.fileInfo.metadata.tokenizer?.ggml?.tokens ?? [];
    if (template.includes("<|channel|>") || pieces.includes("<|channel|>"))
        return "harmony";
    if (template.includes("<|channel>thought") && template.includes("<channel|>"))
        return "gemma4";
    // Magistral's and Ministral-3 Reasoning's: their templates write a thought block (read from the template only: a
    // Mistral model whose template writes no thought is not taken for a thinking one by its vocabulary).
    if (template.includes("[THINK]") && template.includes("[/THINK]"))
        return "mistral";
    if (template.includes("<seed:think>") && template.includes("</seed:think>"))
        return "seed";
    // Tencent Hy3's template writes its tags with str.format (`'<think{}>'.format(HYTK)`, HYTK `:opensource`).
    if ((template.includes("'<think{}>'") && template.includes("':opensource'")) || pieces.includes("<think:opensource>"))
        return "hy3";
    if (template.includes("[BEGIN FINAL RESPONSE]") && template.includes("Here are my reasoning steps:\\n"))
        return "apriel";
    if ((template.includes("<think>") && template.includes("</think>")) || (pieces.includes("<think>") && pieces.includes("</think>")))
        return "think-tags";
    return null;
}
