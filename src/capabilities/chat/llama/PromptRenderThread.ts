import type { Worker } from "node:worker_threads";
import type { Token } from "node-llama-cpp";
import { passOffThreadGate } from "../../../core/workers/offThreadGate.js";
import { siblingModuleUrl } from "../../../core/workers/siblingModuleUrl.js";
import { startModuleThread } from "../../../core/workers/startModuleThread.js";
import type { ChatTurn, ReasoningFormat } from "../ChatEngine.js";
import type { DecisionTokens } from "./decisionPrompt.js";
import type { PreparedPrompt, PromptRequest } from "./preparePrompt.js";
import type { RenderThreadMessage, RenderThreadReply } from "./promptRenderThreadMain.js";
import { TemplateRefusedError } from "../errors/TemplateRefusedError.js";

/**
 * The main thread's side of a chat model's render thread (promptRenderThreadMain): prompts too large to render and
 * tokenize on the main thread go there, and their tokens come back (moved, not copied); so do long token lists to
 * detokenize. Started on the first such prompt (loading the vocabulary takes the thread a second or two, and most
 * servers never need it); unref'd while idle, so it never keeps the process alive; started again if it ever fails.
 */
export class PromptRenderThread {
    private worker: Worker | null = null;
    private nextId = 0;
    private readonly pending = new Map<number, {resolve: (reply: RenderThreadReply) => void, reject: (error: Error) => void}>();
    private closed: Promise<void> | null = null;

    constructor(private readonly modelPath: string) {}

    /**
     * The prompt's tokens, prepared in the render thread (requests are served one at a time, in order). When `signal`
     * aborts (the client left), the thread skips the render if it has not begun it, or stops between the pieces of its
     * template text, and this rejects with the signal's reason.
     */
    async prepare(request: PromptRequest, signal?: AbortSignal): Promise<PreparedPrompt> {
        const reply = await this.cancellable(signal, (id, cancel) => ({type: "render", id, request, cancel}));
        if (!("tokens" in reply))
            throw new Error("The render thread answered a render without tokens");
        return {tokens: toArray(reply.tokens), start: reply.start, clientStart: reply.clientStart};
    }

    /**
     * The prompt's tokens as the tokenize routes write them (tokenListJson: ids, or `{id, piece}` objects), prepared and
     * written in the render thread: a long list crosses as bytes, moved; stopped as `prepare` is.
     */
    async tokenListJson(request: PromptRequest, withPieces: boolean, signal?: AbortSignal): Promise<{count: number, json: Uint8Array}> {
        const reply = await this.cancellable(signal, (id, cancel) => ({type: "render", id, request, cancel, listJson: {withPieces}}));
        if (!("json" in reply))
            throw new Error("The render thread answered a token list without its JSON");
        return {count: reply.count, json: reply.json};
    }

    /** A decision job's prefix and question suffixes (decisionTokens), in the render thread; stopped between questions as `prepare` is. */
    async decisionTokens(format: ReasoningFormat | null, turns: ChatTurn[], questionTexts: string[], signal?: AbortSignal): Promise<DecisionTokens> {
        const reply = await this.cancellable(signal, (id, cancel) => ({type: "decision", id, format, turns, questionTexts, cancel}));
        if (!("suffixLengths" in reply))
            throw new Error("The render thread answered a decision job without its tokens");
        const suffixes: Token[][] = [];
        let at = 0;
        for (const length of reply.suffixLengths) {
            suffixes.push(toArray(reply.suffixes.subarray(at, at + length)));
            at += length;
        }
        return {prefix: toArray(reply.prefix), suffixes};
    }

    /** Sends a message with a cancel flag set when `signal` aborts; a cancelled reply rejects with the signal's reason. */
    private async cancellable(signal: AbortSignal | undefined, message: (id: number, cancel: Int32Array | undefined) => RenderThreadMessage): Promise<RenderThreadReply> {
        const cancel = signal == null ? undefined : new Int32Array(new SharedArrayBuffer(4));
        const onAbort = () => Atomics.store(cancel!, 0, 1);
        if (signal?.aborted)
            onAbort();
        signal?.addEventListener("abort", onAbort, {once: true});
        let reply: RenderThreadReply;
        try {
            reply = await this.send((id) => message(id, cancel));
        } finally {
            signal?.removeEventListener("abort", onAbort);
        }
        if ("cancelled" in reply)
            throw signal?.reason ?? new Error("The render was cancelled");
        return reply;
    }

    /** The text of `tokens` (llama.cpp's detokenizer, special tokens as their text), in the render thread. */
    async detokenize(tokens: readonly number[]): Promise<string> {
        const moved = Uint32Array.from(tokens);
        const reply = await this.send((id) => ({type: "detokenize", id, tokens: moved}), [moved.buffer]);
        if (!("text" in reply))
            throw new Error("The render thread answered a detokenize without text");
        return reply.text;
    }

    private async send(message: (id: number) => RenderThreadMessage, transfer: ArrayBuffer[] = []): Promise<RenderThreadReply> {
        await passOffThreadGate("prompt-render");
        if (this.closed != null)
            throw new Error("The render thread is closed");
        const worker = this.thread();
        const id = this.nextId++;
        return new Promise((resolve, reject) => {
            this.pending.set(id, {resolve, reject});
            worker.ref();
            worker.postMessage(message(id), transfer);
        });
    }

    /** Lets the thread finish what it was sent, free its model and end. */
    close(): Promise<void> {
        this.closed ??= (async () => {
            const worker = this.worker;
            if (worker == null)
                return;
            const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
            // Kept alive until it has freed its model (a process ending meanwhile would end the thread mid-dispose).
            worker.ref();
            worker.postMessage({type: "close"} satisfies RenderThreadMessage);
            await exited;
        })();
        return this.closed;
    }

    private thread(): Worker {
        if (this.worker != null)
            return this.worker;
        const worker = startModuleThread(siblingModuleUrl(import.meta.url, "./promptRenderThreadMain"), {modelPath: this.modelPath});
        worker.unref();
        worker.on("message", (reply: RenderThreadReply) => {
            const waiter = this.pending.get(reply.id);
            this.pending.delete(reply.id);
            if (this.pending.size === 0)
                worker.unref();
            if ("error" in reply)
                waiter?.reject(reply.refused != null ? new TemplateRefusedError(reply.refused, reply.refusedParam) : new Error(reply.error));
            else
                waiter?.resolve(reply);
        });
        const fail = (error: Error) => {
            for (const waiter of this.pending.values())
                waiter.reject(error);
            this.pending.clear();
            this.worker = null;
        };
        worker.on("error", fail);
        worker.on("exit", (code) => fail(new Error(`The prompt render thread exited (${code})`)));
        this.worker = worker;
        return worker;
    }
}

/**
 * The tokens as an array, by a plain loop: `Array.from` of a typed array goes through its iterator, 40-60 ms of the
 * main thread for 150,000 tokens here, the loop about a millisecond.
 */
function toArray(tokens: Uint32Array): Token[] {
    const array = new Array<Token>(tokens.length);
    for (let index = 0; index < tokens.length; index++)
        array[index] = tokens[index] as Token;
    return array;
}
