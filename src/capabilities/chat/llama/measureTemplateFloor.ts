import { setImmediate } from "node:timers/promises";
import type { ChatRole, ChatToolFunction, ChatTurn } from "../ChatEngine.js";
import type { ChatPromptRenderer } from "./ChatPromptRenderer.js";

/** What a chat template adds to a prompt at least, as PromptTokenFloor counts it. */
export type TemplateFloor = {
    /** Tokens each message after the first adds at least, besides its content's own (0 when the template may drop a message). */
    perMessageTokens: number;
    /** Client text the template writes in full into the prompt (it then counts): tool descriptions, whole parameter schemas, whole call arguments, call results. */
    renders: {descriptions: boolean, parameters: boolean, arguments: boolean, results: boolean};
};

const noTemplateFloor: TemplateFloor = {perMessageTokens: 0, renders: {descriptions: false, parameters: false, arguments: false, results: false}};

const marker = (name: string) => `qz${name}7v`;

/** Lets the event loop run between two renders of the measurement. */
export const nextTurnOfEventLoop = () => setImmediate();

/**
 * Measures a template once, at load, by rendering small conversations: the tokens one and two more messages add
 * (of each role, after each role, before a last message or last, empty and with text, less that text's own tokens;
 * the least of all, so the floor stays
 * below what any conversation renders), and whether marked tool text comes out in the rendered prompt. Parameters
 * and arguments count only when a value nested deep in them (and an object key) is written, as `tojson` writes them.
 *
 * The ~50 renders take 50-150 ms of the main thread, where a model loads while the server answers others (a model
 * library's load on first request): `pause` lets the event loop run after each (by default until its next turn), so
 * no single piece holds it for more than one render.
 */
export async function measureTemplateFloor(renderer: ChatPromptRenderer, contentTokens: (text: string) => number,
    pause: () => Promise<void> = nextTurnOfEventLoop): Promise<TemplateFloor> {
    if (!renderer.usesTemplate)
        return noTemplateFloor;
    const count = async (turns: ChatTurn[]) => {
        await pause();
        try {
            return renderer.render(turns).length;
        } catch {
            return null;
        }
    };
    const roles: ChatRole[] = ["user", "assistant", "system"];
    const deltas: number[] = [];
    for (const before of [null, ...roles])
        for (const role of roles)
            for (const content of ["", "a"])
                for (const after of [[{role: "user", content: "z"}], []] as ChatTurn[][]) {
                    // Assistant turns in a row are one message, and those at the end the answer's start: see renderedMessages.
                    if (role === "assistant" && (after.length === 0 || before === "assistant"))
                        continue;
                    const base: ChatTurn[] = [{role: "user", content: "b"}, ...before == null ? [] : [{role: before, content: "c"}]];
                    const [without, withOne, withTwo] = [
                        await count(base.concat(after)),
                        await count([...base, {role, content}, ...after]),
                        await count([...base, {role, content}, {role, content}, ...after])
                    ];
                    const own = content === "" ? 0 : contentTokens(content);
                    if (without != null && withOne != null)
                        deltas.push(withOne - without - own);
                    if (without != null && withTwo != null && role !== "assistant")
                        deltas.push(Math.floor((withTwo - without) / 2) - own);
                }
    const perMessageTokens = deltas.length === 0 ? 0 : Math.max(0, Math.min(...deltas));
    if (renderer.toolCallFormat == null)
        return {perMessageTokens, renders: noTemplateFloor.renders};

    const deep = (name: string) => ({type: "object", properties: {[marker(name + "Key")]: {type: "array", items: {enum: [marker(name)]}}}});
    const tool: ChatToolFunction = {name: "probe", description: marker("Description"), parameters: deep("Parameters")};
    await pause();
    const rendered = (() => {
        try {
            return renderer.renderTemplate([
                {role: "user", content: "b"},
                {role: "assistant", content: "", toolCalls: [{name: "probe", arguments: {nested: [deep("Arguments")]}, result: marker("Result")}]}
            ], [tool])?.toString() ?? "";
        } catch {
            return "";
        }
    })();
    const has = (name: string) => rendered.includes(marker(name));
    return {
        perMessageTokens,
        renders: {
            descriptions: has("Description"),
            parameters: has("Parameters") && has("ParametersKey"),
            arguments: has("Arguments") && has("ArgumentsKey"),
            results: has("Result")
        }
    };
}
