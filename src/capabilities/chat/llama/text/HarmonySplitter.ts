import { harmonyCallFormat, harmonyRecipient } from "./harmonyCalls.js";
import { partialTagLength } from "./partialTagLength.js";
import type { ReasoningSplitter, ReasoningStart } from "./ReasoningSplitter.js";
import type { SplitText } from "./ThinkSplitter.js";

const message = "<|message|>";
/**
 * A message ends with `<|end|>`, which llama.cpp detokenizes to nothing (a control token), so the next
 * message's `<|start|>` (rendered: llama.cpp keeps harmony's framing tokens visible) ends it too; a call ends with
 * `<|call|>` (an end of generation: seen as text only where a model writes it as text).
 */
const ends = ["<|end|>", "<|start|>", "<|call|>"];

/**
 * Splits a harmony model's output (gpt-oss) into its reasoning and its answer as it streams. After the
 * generation prompt (`<|start|>assistant`) the model writes messages framed as `<|channel|>NAME<|message|>
 * TEXT<|end|>`, the next one after `<|start|>assistant`: the `analysis` channel is the reasoning, `final`
 * (and `commentary`, a tool preamble) the answer; the framing reaches neither side. A message addressed to a function
 * (`to=functions.NAME` in its header) is a call: it goes to the answer as harmonyCallFormat writes a call, its end
 * (`<|call|>`) once the message ends (`flush(true)` where the model's end of generation ended it), for the call parser.
 * `start`: the prompt already opened the analysis message (`reasoning`) or a call message up to the name (`call`:
 * harmonyCallFormat's `forcedOpening`). Output without any framing is all answer.
 */
export class HarmonySplitter implements ReasoningSplitter {
    private state: "header" | "reasoning" | "content";
    /** What was pushed and is not out yet: always the end of the text pushed so far (after `opening`). */
    private held = "";
    private pushed = 0;
    /** A message ended: what follows is the next message's header (`assistant<|channel|>...`), never bare text. */
    private framed = false;
    /** The message being written is a call (its end is written as harmonyCallFormat's suffix). */
    private inCall = false;
    /** The header the prompt wrote (a forced call's opening), read with the first header. */
    private opening = "";

    /** A call message (no calls are read: tool_choice none, no tools) is dropped, as llama.cpp's parser drops it. */
    private dropping = false;

    /** `readsCalls`: a message addressed to a function goes on as a call; otherwise it is dropped (neither side). */
    constructor(start: ReasoningStart = "undecided", private readonly readsCalls = true) {
        // `answer`: the prompt opened the final message (thinking off's tail, a prefill continued): all it writes is answer,
        // even text that starts like a header (`<div>`).
        this.state = start === "reasoning" ? "reasoning" : start === "answer" ? "content" : "header";
        if (start === "call") {
            this.opening = harmonyCallFormat.forcedOpening!;
            this.framed = true;
        }
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

    get heldMayBeContent(): boolean {
        return this.state === "content" ? !this.dropping : this.state === "header" && !this.framed;
    }

    push(text: string): SplitText {
        const out: SplitText = {reasoning: "", content: ""};
        this.held += text;
        this.pushed += text.length;
        for (;;) {
            if (this.state === "header") {
                const trimmed = this.held.trimStart();
                if (trimmed !== "" && !this.framed && !trimmed.startsWith("<") && !trimmed.startsWith("to=") && !"to=".startsWith(trimmed)) {
                    // No framing at all: a model that answers straight away.
                    this.state = "content";
                    continue;
                }
                const at = this.held.indexOf(message);
                if (at === -1)
                    return out; // the header is not complete yet
                const header = this.opening + this.held.slice(0, at);
                const headerStart = this.pushed - this.held.length;
                this.opening = "";
                this.held = this.held.slice(at + message.length);
                const recipient = harmonyRecipient(header);
                // The last channel named: gpt-oss-20b sometimes writes a stray `<|channel|>commentary` (` to=assistant`) before
                // the real one (`<|channel|>commentary<|channel|>analysis<|message|>`), as llama.cpp's gpt-oss parser allows.
                const channel = [...header.matchAll(/<\|channel\|>\s*([A-Za-z_]+)/g)].at(-1)?.[1];
                this.state = recipient == null && channel === "analysis" ? "reasoning" : "content";
                if (recipient != null && !this.readsCalls)
                    this.dropping = true;
                else if (recipient != null) {
                    this.inCall = true;
                    addContent(out, harmonyCallFormat.prefix + recipient + harmonyCallFormat.paramsPrefix, headerStart, this.pushed - this.held.length);
                }
                continue;
            }
            const found = ends.map((tag) => ({tag, at: this.held.indexOf(tag)})).filter(({at}) => at !== -1).sort((a, b) => a.at - b.at)[0];
            const stop = found?.at ?? -1;
            const upTo = stop !== -1 ? stop : this.held.length - Math.max(...ends.map((tag) => partialTagLength(this.held, tag)));
            const piece = this.held.slice(0, upTo);
            if (this.state === "reasoning")
                out.reasoning += piece;
            else if (!this.dropping)
                addContent(out, piece, this.pushed - this.held.length);
            if (stop === -1) {
                this.held = this.held.slice(upTo);
                return out;
            }
            const end = this.pushed - this.held.length + stop;
            this.held = this.held.slice(stop + found!.tag.length);
            this.endCall(out, end, end + found!.tag.length);
            this.dropping = false;
            this.state = "header";
            this.framed = true;
        }
    }

    flush(ended = false): SplitText {
        const rest = this.held;
        const at = this.pushed - rest.length;
        this.held = "";
        if (this.state === "reasoning")
            return {reasoning: rest, content: ""};
        const out: SplitText = {reasoning: "", content: ""};
        if (this.state === "content" && !this.dropping) {
            addContent(out, rest, at);
            if (ended)
                this.endCall(out, this.pushed, this.pushed);
        }
        return out;
    }

    /** The end of a call message, as harmonyCallFormat writes it. */
    private endCall(out: SplitText, start: number, end: number) {
        if (!this.inCall)
            return;
        this.inCall = false;
        addContent(out, harmonyCallFormat.suffix, start, end);
    }
}

/** Content found at offset `at` of the text pushed so far (a call's markup, written in place of what spans `at` to `end`). */
function addContent(out: SplitText, piece: string, at: number, end = at + piece.length) {
    if (piece === "")
        return;
    out.content += piece;
    (out.contentRanges ??= []).push([Math.max(0, at), end]);
}
