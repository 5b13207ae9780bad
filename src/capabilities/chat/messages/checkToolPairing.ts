import { ApiError } from "../../../core/http/ApiError.js";
import type { ContentBlockParam } from "./MessagesWire.js";

/** A user or assistant turn (consecutive messages of one role merged): its blocks, each with its path in the request. */
export type Turn = {role: "user" | "assistant", path: string, blocks: {block: ContentBlockParam, path: string}[]};

/**
 * Anthropic's rules for tool blocks, in its words: `tool_use` only in assistant turns, `tool_result` only in user
 * turns, each `tool_use` answered by a `tool_result` in the next turn, and each `tool_result` answering a
 * `tool_use` of the turn before it.
 */
export function checkToolPairing(turns: readonly Turn[]) {
    turns.forEach((turn, index) => {
        const misplaced = turn.blocks.find(({block}) => block.type === (turn.role === "user" ? "tool_use" : "tool_result"));
        if (misplaced != null)
            throw ApiError.invalidRequest(`${misplaced.path}: \`${misplaced.block.type}\` blocks can only be in \`${turn.role === "user" ? "assistant" : "user"}\` messages`, misplaced.path);
        if (turn.role !== "assistant")
            return;
        const next = turns[index + 1];
        const uses = idsOf(turn, "tool_use");
        const answered = new Set(next == null ? [] : idsOf(next, "tool_result").map(({id}) => id));
        const unanswered = uses.filter(({id}) => !answered.has(id)).map(({id}) => id);
        if (next != null && unanswered.length > 0)
            throw ApiError.invalidRequest(`${turn.path}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(", ")}. ` +
                "Each `tool_use` block must have a corresponding `tool_result` block in the next message.", turn.path);
    });
    turns.forEach((turn, index) => {
        if (turn.role !== "user")
            return;
        const previous = index > 0 ? new Set(idsOf(turns[index - 1], "tool_use").map(({id}) => id)) : new Set<string>();
        const stray = idsOf(turn, "tool_result").find(({id}) => !previous.has(id));
        if (stray != null)
            throw ApiError.invalidRequest(`${stray.path}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray.id}. ` +
                "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", stray.path);
    });
}

function idsOf(turn: Turn, type: "tool_use" | "tool_result"): {id: string, path: string}[] {
    return turn.blocks.flatMap(({block, path}) => block.type === type
        ? [{id: block.type === "tool_use" ? block.id : (block as {tool_use_id: string}).tool_use_id, path}]
        : []);
}
