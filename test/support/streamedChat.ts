import type OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";

/**
 * A chat completion streamed through the `openai` client, its deltas joined: the reasoning (`reasoning_content`, not an
 * OpenAI field: the package's `stream()` helper keeps only its last delta) and the content.
 */
export async function streamedChat(client: OpenAI, request: ChatCompletionCreateParamsNonStreaming): Promise<{reasoning: string, content: string}> {
    let [reasoning, content] = ["", ""];
    for await (const chunk of await client.chat.completions.create({...request, stream: true})) {
        const delta = chunk.choices[0]?.delta as {content?: string | null, reasoning_content?: string} | undefined;
        reasoning += delta?.reasoning_content ?? "";
        content += delta?.content ?? "";
    }
    return {reasoning, content};
}
