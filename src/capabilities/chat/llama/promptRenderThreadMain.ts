import { parentPort, workerData } from "node:worker_threads";
import type { Token } from "node-llama-cpp";
import { lowerThreadPriority } from "../../../core/workers/lowerThreadPriority.js";
import { loadLlamaRuntime } from "../../../runtimes/llama/llamaRuntime.js";
import type { ChatTurn, ReasoningFormat } from "../ChatEngine.js";
import { ChatPromptRenderer } from "./ChatPromptRenderer.js";
import { decisionTokens } from "./decisionPrompt.js";
import { preparePrompt, type PromptRequest } from "./preparePrompt.js";
import type { ReasoningStart } from "./ReasoningPhase.js";
import { TokenBytes } from "./TokenBytes.js";
import { tokenPiece } from "../shared/tokenPiece.js";
import { tokenListJson } from "./tokenListJson.js";
import { TemplateRefusedError } from "../errors/TemplateRefusedError.js";

/** What the main thread sends the render thread (see PromptRenderThread). */
export type RenderThreadMessage =
    | {type: "render", id: number, request: PromptRequest, cancel?: Int32Array, /** Reply with the token list's JSON (tokenListJson) instead of the tokens. */ listJson?: {withPieces: boolean}}
    | {type: "decision", id: number, format: ReasoningFormat | null, turns: ChatTurn[], questionTexts: string[], cancel?: Int32Array}
    | {type: "detokenize", id: number, tokens: Uint32Array}
    | {type: "close"};
export type RenderThreadReply =
    | {id: number, tokens: Uint32Array, start: ReasoningStart, clientStart: number}
    | {id: number, count: number, json: Uint8Array}
    | {id: number, text: string}
    | {id: number, prefix: Uint32Array, suffixes: Uint32Array, suffixLengths: Uint32Array}
    | {id: number, error: string, refused?: string, refusedParam?: "messages" | "chat_template_kwargs"}
    | {id: number, cancelled: true};

/**
 * A chat model's render thread: its own copy of the model's vocabulary (loaded `vocabOnly`) and the same
 * ChatPromptRenderer, rendering and tokenizing the prompts that are too large for the main thread (and large decision
 * jobs' prefix and question suffixes, and detokenizing long token lists), one at a time,
 * in the order they come. Closed by a `close` message (never terminated: node-llama-cpp's addon must dispose its
 * model before the thread ends). A render's `cancel` flag (shared memory the main thread sets when the client leaves)
 * is read before it starts and between the pieces of its template text: a cancelled render stops there.
 */
lowerThreadPriority();
const {modelPath} = workerData as {modelPath: string};
/** The cancel flag of the render under way. */
let cancel: Int32Array | null = null;
class RenderCancelled extends Error {}
const checkpoint = () => {
    if (cancel != null && Atomics.load(cancel, 0) !== 0)
        throw new RenderCancelled();
};
const ready = (async () => {
    const llama = await loadLlamaRuntime({gpu: "off"});
    const model = await llama.loadModel({modelPath, vocabOnly: true});
    return {llama, model, renderer: new ChatPromptRenderer(model, {checkpoint}), tokenBytes: new TokenBytes(model)};
})();
// Kept as a rejection for each request rather than an unhandled one.
ready.catch(() => {});

let queue: Promise<void> = Promise.resolve();
parentPort!.on("message", (message: RenderThreadMessage) => {
    queue = queue.then(() => handle(message)).catch(() => {});
});

async function handle(message: RenderThreadMessage) {
    if (message.type === "close") {
        try {
            const {llama, model} = await ready;
            await model.dispose();
            await llama.dispose();
        } finally {
            parentPort!.close();
        }
        return;
    }
    try {
        const {model, renderer, tokenBytes} = await ready;
        if (message.type === "detokenize") {
            parentPort!.postMessage({id: message.id, text: model.detokenize(Array.from(message.tokens) as Token[], true)} satisfies RenderThreadReply);
            return;
        }
        cancel = message.cancel ?? null;
        checkpoint();
        if (message.type === "decision") {
            const {prefix, suffixes} = decisionTokens(model, renderer, message.format, message.turns, message.questionTexts, checkpoint);
            const moved = {prefix: Uint32Array.from(prefix), suffixes: Uint32Array.from(suffixes.flat()), suffixLengths: Uint32Array.from(suffixes, (suffix) => suffix.length)};
            parentPort!.postMessage({id: message.id, ...moved} satisfies RenderThreadReply, [moved.prefix.buffer, moved.suffixes.buffer, moved.suffixLengths.buffer]);
            return;
        }
        const {tokens, start, clientStart} = preparePrompt(model, renderer, message.request);
        if (message.listJson != null) {
            checkpoint();
            const json = Buffer.from(tokenListJson(tokens, message.listJson.withPieces ? (token) => tokenPiece(tokenBytes.of(token)) : null));
            const bytes = new Uint8Array(json.buffer, json.byteOffset, json.byteLength);
            parentPort!.postMessage({id: message.id, count: tokens.length, json: bytes} satisfies RenderThreadReply, [json.buffer as ArrayBuffer]);
            return;
        }
        const moved = Uint32Array.from(tokens);
        parentPort!.postMessage({id: message.id, tokens: moved, start, clientStart} satisfies RenderThreadReply, [moved.buffer]);
    } catch (error) {
        parentPort!.postMessage((error instanceof RenderCancelled ? {id: message.id, cancelled: true}
            : {id: message.id, error: String((error as Error)?.message ?? error),
                ...(error instanceof TemplateRefusedError ? {refused: error.templateMessage, refusedParam: error.param} : {})}) satisfies RenderThreadReply);
    } finally {
        cancel = null;
    }
}
