import type { SettingValues } from "../../settings/Setting.js";
import { ConfigError, type Setting } from "../../settings/Setting.js";
import { integer, oneOf, parseByteSize, probability } from "../../settings/settingKinds.js";

/** The server-wide settings of chat models (flags and environment variables; a manifest entry may override some per model). */
export const chatServerSettings = {
    // As llama-server (`-fa auto`): on this machine's CPU it raised decode 567 -> 629 tok/s (llama-bench, README "Chat performance").
    flashAttention: oneOf(["on", "off", "auto"], {
        flag: "flash-attention", env: "FLASH_ATTENTION", arg: "<m>", default: "auto", help: "chat models: on, off, auto (where llama.cpp supports it)",
        docs: "chat models: `on`, `off`, or `auto` = where llama.cpp supports it on the backend (as llama-server); in `system_fingerprint`. See [Flash attention](performance.md#flash-attention)"
    }),
    promptCache: oneOf(["on", "exact", "off"], {
        flag: "prompt-cache", env: "PROMPT_CACHE", arg: "<m>", default: "on", help: "chat models: on, exact (bit-identical outputs only), off",
        docs: "chat models: `on` reuses the KV cache of the longest prefix a prompt shares with a free sequence's last request, `exact` only where outputs stay bit-identical to a miss, `off` never. See [Prompt cache](performance.md#prompt-cache)"
    }),
    // Two or three long conversations of a small model; a 7B model's 32k-token context takes 4 GB of KV cache, so only part of its sequences.
    promptCacheDisk: {
        flag: "prompt-cache-disk", env: "PROMPT_CACHE_DISK", arg: "<size>", default: 1024 ** 3, shownDefault: {help: "1gb", docs: "`1gb`"},
        parse: (raw, name) => {
            const bytes = raw.trim() === "0" ? 0 : parseByteSize(raw);
            if (bytes == null || (bytes > 0 && bytes < 1024))
                throw new ConfigError(`${name} must be 0 or a size of at least 1kb such as 512mb or 2gb, got "${raw}"`);
            return bytes;
        },
        help: "chat models: prompt cache kept on disk per model, when it is unloaded and for conversations pushed out of its sequences (0 = none)",
        docs: "chat models: bytes of each model's prompt cache (its sequences' KV state) saved under `--cache-dir` when the model is evicted or idles out, and restored when it loads again, most recently used sequences first; also, while it is loaded, the conversations other conversations pushed out of its sequences, loaded back when they return ([docs/performance.md](performance.md#conversations-pushed-out-of-a-sequence)); `0` saves nothing. See [docs/models.md](models.md#the-prompt-cache-across-an-unload)"
    } satisfies Setting<number> as Setting<number>,
    reasoningFormat: oneOf(["parsed", "raw"], {
        flag: "reasoning-format", env: "REASONING_FORMAT", arg: "<f>", default: "parsed", help: "thinking models: parsed (reasoning_content apart), raw (as generated)",
        docs: "thinking models: `parsed` (reasoning apart, `reasoning_content`), `raw` (in the answer, as generated)"
    }),
    // Greedy output stays the same token for token; rejected drafts are kept rare (docs/speculative.md).
    speculative: oneOf(["lookup", "draft", "off"], {
        flag: "speculative", env: "SPECULATIVE", arg: "<m>", default: "lookup", help: "chat models: lookup (drafts from prompt/output), draft (manifest draftModel), off",
        docs: "chat models' speculative decoding: `lookup` (drafts copied from the prompt and the output), `draft` (a manifest `draftModel`; lookup for models without one), `off`. A manifest entry's `speculative` wins. See [docs/speculative.md](speculative.md)"
    }),
    draftMax: integer({flag: "draft-max", env: "DRAFT_MAX", arg: "<n>", default: 64, min: 1, max: 64, help: "most tokens per draft",
        docs: "most tokens per draft (a manifest `draftMax` wins)"}),
    // As llama-server's `--spec-draft-p-min` (its default, 0: no floor).
    draftPMin: probability({flag: "draft-p-min", env: "DRAFT_P_MIN", arg: "<p>", default: 0, help: "draft models: a draft stops before a token the draft model gives less probability",
        docs: "draft models: a draft stops before the first token the draft model itself gives less than this probability (llama-server's `--spec-draft-p-min`; `0`: no floor; a manifest `draftPMin` wins). See [docs/speculative.md](speculative.md)"}),
    // As OpenAI keeps responses for previous_response_id; per key, so that one key cannot push out another's.
    responseStoreMb: integer({
        flag: "response-store-mb", env: "RESPONSE_STORE_MB", arg: "<n>", default: 64, min: 0, max: 1_048_576, help: "stored Responses per API key, MB of JSON (0 = none stored)",
        docs: "each API key's share of the stored Responses (`store`, `previous_response_id`), in MB of their JSON, with at most 1,000 responses; all keys together at most four shares; `0` stores nothing (every response says `store: false`). See [docs/responses.md](responses.md#stored-responses)"
    })
};

/** What the chat settings read into. */
export type ChatServerConfig = SettingValues<typeof chatServerSettings>;
export type FlashAttentionSetting = ChatServerConfig["flashAttention"];
export type PromptCacheSetting = ChatServerConfig["promptCache"];
export type SpeculativeSetting = ChatServerConfig["speculative"];
