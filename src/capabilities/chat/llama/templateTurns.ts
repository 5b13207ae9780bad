import type { ChatHistoryItem, ChatModelFunctions, ChatModelResponse } from "node-llama-cpp";
import type { ChatToolFunction, ChatTurn } from "../ChatEngine.js";

// A conversation's turns as node-llama-cpp's Jinja wrapper takes them (its chat history and functions), and the shapes
// some templates need the turns in first (ChatPromptRenderer).

/** The turn is an assistant's with tool calls. */
export function makesCalls(turn: ChatTurn): boolean {
    return (turn.toolCalls?.length ?? 0) > 0;
}

/** The turns with system and user messages that follow one of the same role joined into it (a blank line between). */
export function joinAdjacentTurns(turns: readonly ChatTurn[]): ChatTurn[] {
    const joined: ChatTurn[] = [];
    for (const turn of turns) {
        const previous = joined.at(-1);
        if (previous != null && previous.role === turn.role && turn.role !== "assistant") {
            const images = [...previous.images ?? [], ...turn.images ?? []];
            joined[joined.length - 1] = {...previous, content: previous.content + "\n\n" + turn.content, ...(images.length === 0 ? {} : {images})};
        } else
            joined.push(turn);
    }
    return joined;
}

/**
 * The turns as gpt-oss's template renders them: the text of a response with a call is its analysis, which the template
 * drops once a final answer follows anywhere later (and node-llama-cpp's wrapper fails on a message the template leaves out).
 */
export function withoutDroppedAnalysis(turns: readonly ChatTurn[]): readonly ChatTurn[] {
    const lastAnswer = turns.findLastIndex((turn) => turn.role === "assistant" && !makesCalls(turn));
    return turns.map((turn, index) => {
        if (turn.role !== "assistant" || !makesCalls(turn))
            return turn;
        if (index < lastAnswer)
            return turn.content === "" ? turn : {...turn, content: ""};
        // A call's analysis as the server returned it (reasoning_content, a reasoning item, a thinking block): the
        // template keeps it until a final answer follows (llama-server passes it as the template's `thinking`).
        // With a text too, the reasoning is the analysis and the text is left out, as llama-server leaves it out (gpt-oss's
        // template refuses a message with both).
        return turn.reasoning != null && turn.reasoning !== "" ? {...turn, content: turn.reasoning} : turn;
    });
}

export function toModelFunctions(functions: readonly ChatToolFunction[]): ChatModelFunctions {
    return Object.fromEntries(functions.map((fn) => [fn.name, {
        ...(fn.description == null ? {} : {description: fn.description}),
        params: fn.parameters as never
    }]));
}

/** The turns as node-llama-cpp's chat history; `newTurn`: it ends with an empty model turn for the reply (not an open response continued). */
export function toChatHistory(turns: readonly ChatTurn[]): {history: ChatHistoryItem[], newTurn: boolean} {
    const history: ChatHistoryItem[] = [];
    // An assistant turn right after one with tool calls (and their results) continues that response.
    let openResponse: ChatModelResponse | null = null;
    for (const turn of turns) {
        if (turn.role !== "assistant") {
            openResponse = null;
            history.push({type: turn.role, text: turn.content});
            continue;
        }
        // An empty text before calls is left out: the template would see a (truthy) placeholder for it.
        const items: ChatModelResponse["response"] = turn.content === "" && (openResponse != null || makesCalls(turn))
            ? []
            : [turn.content];
        turn.toolCalls?.forEach((call, index) => items.push({
            type: "functionCall", name: call.name, params: call.arguments, result: call.result, startsNewChunk: index === 0
        }));
        if (openResponse != null)
            openResponse.response.push(...items);
        else
            history.push({type: "model", response: items});
        openResponse = makesCalls(turn) ? history.at(-1) as ChatModelResponse : null;
    }
    // The empty model turn at the end makes the template add the generation prompt; after tool
    // results the open response is continued instead (its empty tail is the generation prompt).
    if (openResponse == null)
        history.push({type: "model", response: []});
    return {history, newTurn: openResponse == null};
}
