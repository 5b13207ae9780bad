import { partialTagLength } from "./partialTagLength.js";
import type { ReasoningSplitter } from "./ReasoningSplitter.js";
import type { SplitText } from "./ThinkSplitter.js";

const message = "<|message|>";
/**
 * A message ends with `<|end|>`, which llama.cpp detokenizes to nothing (a control token), so the next
 * message's `<|start|>` (rendered: llama.cpp keeps harmony's framing tokens visible) ends it too.
 */
const ends = ["<|end|>", "<|start|>"];

/**
 * Splits a harmony model's output (gpt-oss) into its reasoning and its answer as it streams. After the
 * generation prompt (`<|start|>assistant`) the model writes messages framed as `<|channel|>NAME<|message|>
 * TEXT<|end|>`, the next one after `<|start|>assistant`: the `analysis` channel is the reasoning, `final`
 * (and `commentary`, a tool preamble) the answer; the framing reaches neither side. `startsInReasoning`: the
 * prompt already opened the analysis message. Output without any framing is all answer.
 */
export class HarmonySplitter implements ReasoningSplitter {
    private state: "header" | "reasoning" | "content";
    /** What was pushed and is not out yet: always the end of the text pushed so far. */
    private held = "";
    private pushed = 0;
    /** A message ended: what follows is the next message's header (`assistant<|channel|>...`), never bare text. */
    private framed = false;

    constructor(startsInReasoning: boolean) {
        this.state = startsInReasoning ? "reasoning" : "header";
    }

    get inReasoning(): boolean {
        return this.state === "reasoning";
    }

    get inAnswer(): boolean {
        return this.state === "content";
    }

    get undecided(): number {
        return this.held.length;
    }

    push(text: string): SplitText {
        const out: SplitText = {reasoning: "", content: ""};
        this.held += text;
        this.pushed += text.length;
        for (;;) {
            if (this.state === "header") {
                const trimmed = this.held.trimStart();
                if (trimmed !== "" && !trimmed.startsWith("<") && !this.framed) {
                    // No framing at all: a model that answers straight away.
                    this.state = "content";
                    continue;
                }
                const at = this.held.indexOf(message);
                if (at === -1)
                    return out; // the header is not complete yet
                const channel = /<\|channel\|>\s*([A-Za-z_]+)/.exec(this.held.slice(0, at))?.[1];
                this.held = this.held.slice(at + message.length);
                this.state = channel === "analysis" ? "reasoning" : "content";
                continue;
            }
            const found = ends.map((tag) => ({tag, at: this.held.indexOf(tag)})).filter(({at}) => at !== -1).sort((a, b) => a.at - b.at)[0];
            const stop = found?.at ?? -1;
            const upTo = stop !== -1 ? stop : this.held.length - Math.max(...ends.map((tag) => partialTagLength(this.held, tag)));
            const piece = this.held.slice(0, upTo);
            if (this.state === "reasoning")
                out.reasoning += piece;
            else
                addContent(out, piece, this.pushed - this.held.length);
            if (stop === -1) {
                this.held = this.held.slice(upTo);
                return out;
            }
            this.held = this.held.slice(stop + found!.tag.length);
            this.state = "header";
            this.framed = true;
        }
    }

    flush(): SplitText {
        const rest = this.held;
        const at = this.pushed - rest.length;
        this.held = "";
        if (this.state === "reasoning")
            return {reasoning: rest, content: ""};
        const out: SplitText = {reasoning: "", content: ""};
        if (this.state === "content")
            addContent(out, rest, at);
        return out;
    }
}

/** Content found at offset `at` of the text pushed so far. */
function addContent(out: SplitText, piece: string, at: number) {
    if (piece === "")
        return;
    out.content += piece;
    (out.contentRanges ??= []).push([at, at + piece.length]);
}
