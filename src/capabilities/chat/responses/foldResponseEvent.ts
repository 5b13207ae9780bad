import type { OutputItem, ResponseObject, ResponseStreamEvent } from "./ResponsesWire.js";

/**
 * A streamed response's event applied to the response so far (as openai-node's `accumulateResponse` folds them into
 * its final `Response`): the lifecycle events (`response.created` ... `.completed`) replace it, an item's and a part's
 * `added` append, their `done` replace, deltas append their text and a `*.done` sets it. Returns the response to fold
 * the next event into (the one given, changed in place, or a lifecycle event's copy). What is kept is a copy, so the
 * events may be written later or reused.
 */
export function foldResponseEvent(response: ResponseObject, event: ResponseStreamEvent): ResponseObject {
    switch (event.type) {
        case "response.created": case "response.in_progress": case "response.completed": case "response.incomplete": case "response.failed":
            return structuredClone(event.response);
        case "response.output_item.added":
            response.output.push(structuredClone(event.item));
            break;
        case "response.output_item.done":
            itemAt(response, event.output_index);
            response.output[event.output_index] = structuredClone(event.item);
            break;
        case "response.content_part.added": case "response.content_part.done": {
            const item = itemAt(response, event.output_index, event.part.type === "reasoning_text" ? "reasoning" : "message");
            const content = item.content as (typeof event.part)[];
            content[event.type === "response.content_part.added" ? content.length : event.content_index] = structuredClone(event.part);
            break;
        }
        case "response.reasoning_summary_part.added": case "response.reasoning_summary_part.done": {
            const summary = itemAt(response, event.output_index, "reasoning").summary;
            summary[event.type === "response.reasoning_summary_part.added" ? summary.length : event.summary_index] = structuredClone(event.part);
            break;
        }
        case "response.reasoning_summary_text.delta":
            itemAt(response, event.output_index, "reasoning").summary[event.summary_index].text += event.delta;
            break;
        case "response.reasoning_summary_text.done":
            itemAt(response, event.output_index, "reasoning").summary[event.summary_index].text = event.text;
            break;
        case "response.reasoning_text.delta":
            itemAt(response, event.output_index, "reasoning").content[event.content_index].text += event.delta;
            break;
        case "response.reasoning_text.done":
            itemAt(response, event.output_index, "reasoning").content[event.content_index].text = event.text;
            break;
        case "response.output_text.delta":
            itemAt(response, event.output_index, "message").content[event.content_index].text += event.delta;
            break;
        case "response.output_text.done":
            itemAt(response, event.output_index, "message").content[event.content_index].text = event.text;
            break;
        case "response.function_call_arguments.delta":
            itemAt(response, event.output_index, "function_call").arguments += event.delta;
            break;
        case "response.function_call_arguments.done":
            itemAt(response, event.output_index, "function_call").arguments = event.arguments;
            break;
        case "response.custom_tool_call_input.delta":
            itemAt(response, event.output_index, "custom_tool_call").input += event.delta;
            break;
        case "response.custom_tool_call_input.done":
            itemAt(response, event.output_index, "custom_tool_call").input = event.input;
            break;
    }
    return response;
}

/** The output item an event is about, of the type it must be (anything else is this server's own mistake). */
function itemAt<Type extends OutputItem["type"]>(response: ResponseObject, index: number, type?: Type): Extract<OutputItem, {type: Type}> {
    const item = response.output[index];
    if (item == null || (type != null && item.type !== type))
        throw new Error(`No ${type ?? "output"} item at output_index ${index}`);
    return item as Extract<OutputItem, {type: Type}>;
}
