import type { ChatEngine, ChatEngineInfo, ChatJob, ChatRun, ChatRunHooks, ChoiceResult, DecisionJob, DecisionOutcome, TokenizeInput, Tokenized } from "../../src/capabilities/chat/ChatEngine.js";
import { ReasoningOutput } from "../../src/capabilities/chat/llama/text/ReasoningOutput.js";
import type { EngineLoad } from "../../src/core/engines/EngineLoad.js";

/**
 * A scripted chat engine for testing the HTTP layer without a model: it "generates" the given
 * pieces, each after `beforePiece` resolves (a test's gate; by default the next turn of the event
 * loop), then finishes or fails as told.
 */
export class FakeChatEngine implements ChatEngine {
    readonly info: ChatEngineInfo;
    readonly jobs: ChatJob[] = [];
    private busy = 0;

    /** `cachedPromptTokens`: of its 3 prompt tokens, how many the "prompt cache" serves (reported through onPromptCache and the result). */
    constructor(id: string, private readonly script: {pieces: string[], beforePiece?: (index: number, signal: AbortSignal) => Promise<void>, failWith?: Error, info?: Partial<ChatEngineInfo>, cachedPromptTokens?: number}) {
        this.info = {id, contextSize: 1000, vocabularySize: 100, fingerprint: "fp_fake", decisionOptions: 62, ...script.info};
    }

    load(): EngineLoad {
        return {parallel: 2, busy: this.busy, waiting: 0};
    }

    countTextTokens(text: string): number {
        return text.split(/\s+/).filter((word) => word !== "").length;
    }

    /** A word count of the turns: enough for the routes that report it. */
    async countPromptTokens(job: ChatJob): Promise<number> {
        return job.turns.reduce((sum, turn) => sum + turn.content.split(/\s+/).filter((word) => word !== "").length, 0);
    }

    /** A token per word, its id the word's length (within the vocabulary): the text and the turns' contents alike. */
    async tokenize(input: TokenizeInput, {withPieces}: {withPieces: boolean}): Promise<Tokenized> {
        const text = input.kind === "text" ? input.text : input.job.turns.map((turn) => turn.content).join(" ");
        const words = text.split(/\s+/).filter((word) => word !== "");
        const tokens = words.map((word) => Math.min(word.length, this.info.vocabularySize - 1));
        return withPieces ? {tokens, pieces: words} : {tokens};
    }

    /** A word of `x`s per token, as long as its id. */
    async detokenize(tokens: readonly number[]): Promise<string> {
        return tokens.map((token) => "x".repeat(token)).join(" ");
    }

    readonly decisionJobs: DecisionJob[] = [];

    /** Every option of a question equally likely; a word per turn and per question as tokens. */
    async decide(job: DecisionJob, signal: AbortSignal): Promise<DecisionOutcome> {
        this.decisionJobs.push(job);
        await this.script.beforePiece?.(0, signal);
        signal.throwIfAborted();
        return {
            probabilities: job.questions.map((question) => question.options.map(() => 1 / question.options.length)),
            prefixTokens: job.turns.length, suffixTokens: job.questions.length * 2, cachedTokens: this.script.cachedPromptTokens ?? 0
        };
    }

    async submit(job: ChatJob, hooks: ChatRunHooks): Promise<ChatRun> {
        this.jobs.push(job);
        this.busy++;
        const done = (async () => {
            try {
                // As the real engine: no hook before the caller has its run (submit has settled).
                await new Promise((resolve) => setImmediate(resolve));
                const results: ChoiceResult[] = [];
                for (let index = 0; index < job.n; index++) {
                    if (this.script.cachedPromptTokens != null)
                        hooks.onPromptCache?.(index, this.script.cachedPromptTokens);
                    // A thinking model's output is split as the real engine splits it (ReasoningOutput).
                    const output = new ReasoningOutput(this.info.reasoningFormat, "undecided", {
                        reasoning: (text) => hooks.onReasoning?.(index, text),
                        content: (text) => hooks.onText?.(index, text)
                    });
                    for (const [pieceIndex, piece] of this.script.pieces.entries()) {
                        await (this.script.beforePiece?.(pieceIndex, hooks.signal) ?? new Promise((resolve) => setImmediate(resolve)));
                        hooks.signal.throwIfAborted();
                        output.push(piece);
                    }
                    if (this.script.failWith != null)
                        throw this.script.failWith;
                    const {content: text, reasoning} = output.finish();
                    const result: ChoiceResult = {
                        index, text, finishReason: "stop", completionTokens: this.script.pieces.length,
                        ...(this.script.cachedPromptTokens != null ? {cachedPromptTokens: this.script.cachedPromptTokens} : {}),
                        ...(reasoning === undefined ? {} : {reasoning, reasoningTokens: this.countTextTokens(reasoning ?? "")})
                    };
                    hooks.onFinish?.(result);
                    results.push(result);
                }
                return results;
            } finally {
                this.busy--;
            }
        })();
        done.catch(() => {});
        return {promptTokens: 3, done};
    }

    async dispose() {}
}
