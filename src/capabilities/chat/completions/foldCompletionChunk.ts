import type { Usage } from "../ChatCompletionWire.js";
import type { TextCompletion, TextCompletionChunk, WireCompletionChoice } from "./CompletionWire.js";

/** A legacy completion as its chunks built it so far (foldCompletionChunk); `finishedTextCompletion` makes it the answer. */
export type TextCompletionSnapshot = Omit<TextCompletionChunk, "choices" | "usage"> & {choices: WireCompletionChoice[], usage?: Usage | null};

/**
 * A streamed chunk of a legacy completion applied to the completion so far: the first chunk gives the envelope; each
 * choice is found by its `index`; `text` appended (the echoed prompt first, when asked for); a chunk's `logprobs`
 * arrays appended to the choice's (`text_offset`s are already counted from the choice's start); `finish_reason` set;
 * `usage` is the last chunk's. What is kept is a copy. Pure but for `snapshot`, changed in place and returned.
 */
export function foldCompletionChunk(snapshot: TextCompletionSnapshot | undefined, chunk: TextCompletionChunk): TextCompletionSnapshot {
    const folded: TextCompletionSnapshot = snapshot ??
        {id: chunk.id, object: chunk.object, created: chunk.created, model: chunk.model, system_fingerprint: chunk.system_fingerprint, choices: []};
    if (chunk.usage !== undefined)
        folded.usage = chunk.usage == null ? null : structuredClone(chunk.usage);
    for (const {index, text, logprobs, finish_reason} of chunk.choices) {
        const choice = folded.choices[index] ??= {text: "", index, logprobs: null, finish_reason: null};
        choice.text += text;
        if (logprobs != null) {
            const into = choice.logprobs ??= {tokens: [], token_logprobs: [], top_logprobs: [], text_offset: []};
            into.tokens.push(...logprobs.tokens);
            into.token_logprobs.push(...logprobs.token_logprobs);
            into.top_logprobs.push(...logprobs.top_logprobs.map((top) => top == null ? null : {...top}));
            into.text_offset.push(...logprobs.text_offset);
        }
        if (finish_reason != null)
            choice.finish_reason = finish_reason;
    }
    return folded;
}

/** The completion the chunks folded to, once they are all in: every choice finished, in index order, with the usage. */
export function finishedTextCompletion(snapshot: TextCompletionSnapshot): TextCompletion {
    const {usage, choices, ...envelope} = snapshot;
    if (usage == null)
        throw new Error("The completion's chunks carried no usage");
    return {
        ...envelope,
        choices: choices.filter((choice) => choice != null).map((choice) => {
            if (choice.finish_reason == null)
                throw new Error(`Choice ${choice.index} of the completion never finished`);
            return {...choice, finish_reason: choice.finish_reason};
        }),
        usage
    };
}
