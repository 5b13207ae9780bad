/**
 * How a thinking model writes its reasoning: `think-tags` (`<think>...</think>` before the answer: Qwen3,
 * DeepSeek-R1 distills, QwQ, most reasoning models) or `harmony` (gpt-oss: an `analysis` channel, then the
 * `final` channel, each message framed by `<|channel|>NAME<|message|>...<|end|>`).
 */
export type ReasoningFormat = "think-tags" | "harmony";
