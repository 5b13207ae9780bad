import type { ReasoningItem } from "./ResponsesWire.js";

/** Marks this server's `encrypted_content`, so another server's (OpenAI's) is recognised as not ours. */
const marker = "local-openai-server reasoning v1\n";

/**
 * A reasoning item's `encrypted_content`, asked for with `include: ["reasoning.encrypted_content"]` by clients that
 * store nothing on the server (`store: false`, Codex) and send the item back to continue. It is NOT encrypted: the
 * server is local and keeps no secret, so it is the reasoning text in base64 behind a marker, opaque only by convention.
 */
export function encryptedContentOf(reasoning: string): string {
    return Buffer.from(marker + reasoning, "utf8").toString("base64");
}

/** The reasoning text in one of this server's `encrypted_content` values; null for any other value (OpenAI's, say). */
export function reasoningOfEncryptedContent(value: string): string | null {
    const text = Buffer.from(value, "base64").toString("utf8");
    return text.startsWith(marker) ? text.slice(marker.length) : null;
}

/**
 * The reasoning a reasoning item sent back as input carries: its `reasoning_text` content, else its `encrypted_content`
 * (this server's), else its summary (this server's summary is the reasoning whole); null when it has none of them.
 */
export function reasoningOfItem(item: ReasoningItem): string | null {
    if (item.content != null && item.content.length > 0)
        return item.content.map((part) => part.text).join("");
    const decoded = item.encrypted_content == null ? null : reasoningOfEncryptedContent(item.encrypted_content);
    if (decoded != null)
        return decoded;
    return item.summary != null && item.summary.length > 0 ? item.summary.map((part) => part.text).join("\n\n") : null;
}
