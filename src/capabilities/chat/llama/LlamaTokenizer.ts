import type { LlamaModel, Token } from "node-llama-cpp";
import type { EngineLoad } from "../../../core/engines/EngineLoad.js";
import { QueueFullError } from "../../../core/engines/QueueFullError.js";
import type { TokenPiece, Tokenized } from "../ChatEngine.js";
import type { PreparedPrompt, PromptRequest } from "./preparePrompt.js";
import type { PromptRenderThread } from "./PromptRenderThread.js";
import type { TokenBytes } from "./TokenBytes.js";
import { tokenPiece } from "../shared/tokenPiece.js";

/** Token lists detokenized on the main thread (llama.cpp's detokenizer takes well under a millisecond for these). */
const smallDetokenize = 16_384;

export type LlamaTokenizerParts = {
    id: string;
    model: LlamaModel;
    tokenBytes: TokenBytes;
    renderThread: PromptRenderThread;
    /** The engine's own prompt preparation: on the main thread when small, in the render thread otherwise. */
    prepare(request: PromptRequest, signal?: AbortSignal): Promise<PreparedPrompt>;
    /** Whether the engine prepares `request` on the main thread (isSmallPrompt). */
    isSmall(request: PromptRequest): boolean;
    /** The engine's admission queue's load, and how many may wait in it. */
    load(): EngineLoad;
    queueSize: number;
};

/**
 * A chat model's /v1/tokenize and /v1/detokenize: the same prompt preparation as a chat turn (large work in the render
 * thread), pieces as llama-server gives them, and the model's admission rule: a request needs no sequence, but is
 * refused (503) whenever a chat request would be, because the model's waiting line is full. A large prompt's token list
 * comes back from the render thread as its JSON (tokenListJson), never as a list the main thread would turn into
 * millions of objects and serialize (a 9 MB text is ~4 million tokens).
 */
export class LlamaTokenizer {
    private readonly pieces = new Map<number, TokenPiece>();

    constructor(private readonly parts: LlamaTokenizerParts) {}

    async tokenize(request: PromptRequest, withPieces: boolean, signal?: AbortSignal): Promise<Tokenized> {
        this.admit();
        if (!this.parts.isSmall(request))
            return this.parts.renderThread.tokenListJson(request, withPieces, signal);
        const {tokens} = await this.parts.prepare(request, signal);
        return withPieces ? {tokens, pieces: tokens.map((token) => this.piece(token))} : {tokens};
    }

    async detokenize(tokens: readonly number[]): Promise<string> {
        this.admit();
        return tokens.length <= smallDetokenize
            ? this.parts.model.detokenize(tokens as readonly Token[], true)
            : this.parts.renderThread.detokenize(tokens);
    }

    /** As AdmissionQueue.acquire refuses: every place taken (or others already waiting) and the line full. */
    private admit() {
        const {parallel, busy, waiting} = this.parts.load();
        if ((waiting > 0 || busy >= parallel) && waiting >= this.parts.queueSize)
            throw new QueueFullError(this.parts.id, this.parts.queueSize);
    }

    private piece(token: Token): TokenPiece {
        let piece = this.pieces.get(token);
        if (piece == null) {
            piece = tokenPiece(this.parts.tokenBytes.of(token));
            this.pieces.set(token, piece);
        }
        return piece;
    }
}
