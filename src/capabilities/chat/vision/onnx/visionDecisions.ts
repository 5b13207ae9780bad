import type { TaskContext } from "../../../../core/workers/WorkerTask.js";
import { labelProbabilities } from "../../shared/labelProbabilities.js";
import type { VisionModel } from "./VisionModel.js";
import type { TemplateTurn, VisionDecisionResult, VisionDecisionTask } from "./visionWorkerProtocol.js";

/** Stands for a question's text while the template renders the input once (never in a client's text: it holds control characters). */
const questionSlot = "\u0001question\u0002";

/**
 * A decision job on a vision model, in its worker, by the llama engine's rules (docs/decisions.md): the input rendered
 * once through the chat template with the question closing its last user turn (after a blank line; a user turn of its
 * own otherwise), the text cut where the question goes; each asked question (every option order) put there and
 * evaluated with the images, its labels' probabilities read from the model's next-token distribution
 * (labelProbabilities: a pair's first label forced as the next token for its digit's). Each evaluation runs the whole
 * prompt, images included: no KV cache is kept between them. The request's cancel flag is checked between them.
 */
export async function visionDecisions(model: VisionModel, task: VisionDecisionTask, context: TaskContext): Promise<VisionDecisionResult> {
    const turns: TemplateTurn[] = task.turns.map((turn) => ({
        ...turn, content: turn.content.map((part) => part.type === "text" ? {type: "text", text: part.text.replaceAll(questionSlot, "")} : part)
    }));
    const last = turns.at(-1);
    if (last?.role === "user")
        turns[turns.length - 1] = {...last, content: [...last.content, {type: "text", text: "\n\n" + questionSlot}]};
    else
        turns.push({role: "user", content: [{type: "text", text: questionSlot}]});
    const [before, after, ...rest] = model.render(turns).split(questionSlot);
    if (after == null || rest.length > 0)
        throw new Error("The chat template did not render the question's turn once");
    const prefixTokens = (await model.encode(before, task.images)).input_ids.dims[1];
    const labels: number[][] = [];
    let suffixTokens = 0;
    for (const question of task.questions) {
        context.throwIfCancelled();
        const inputs = await model.encode(before + question.text + after, task.images);
        const tokens = inputs.input_ids.dims[1];
        if (tokens >= model.description.contextSize)
            return {exceeded: tokens};
        suffixTokens += tokens - prefixTokens;
        labels.push(await labelProbabilities(question.shown, await model.nextToken(inputs), (first) => {
            context.throwIfCancelled();
            suffixTokens++;
            return model.nextToken(inputs, first.token);
        }));
    }
    return {labels, prefixTokens, suffixTokens};
}
