import type { ToolCallFormat } from "../ChatEngine.js";
import { findPiece } from "./parameterMarkup.js";
import { afterObjectCall, isObjectCall, JsonObjectScan } from "./jsonObjectEnd.js";
import { afterListedCall, argumentsAreJson, callName, jsonArguments, jsonItemEnd, type ArgumentsReader } from "./parseToolCalls.js";
import { callStartOf, findNameEnd, partialPrefixAtEnd, type CallStart } from "./callMarkers.js";
import { PythonArgumentsScan } from "./pythonCalls.js";

export type ToolCallStreamEvent =
    | {type: "content", text: string}
    | {type: "call", index: number, name: string}
    | {type: "arguments", index: number, fragment: string};

/**
 * The streaming counterpart of parseToolCalls: text pieces in; content, call starts and argument
 * fragments out, such that the content is the non-streamed content and each call's concatenated
 * fragments are its non-streamed `arguments`.
 *
 * Text that could be the start of a call prefix is held back (like a stop sequence), and so is
 * whitespace before it (the content before a call is trimmed at its end). With `hold` (tool_choice
 * auto, where a call may turn out malformed and then, as in the non-streamed answer, everything is
 * content), a call goes out only once it is complete and well-formed: its start, then its whole
 * arguments as one fragment. Without (grammar-forced calls, which can only be cut short, never
 * malformed), argument fragments go out as they are generated; arguments written in markup (`format.parameters`)
 * go out whole once the call ends (or is cut short), read into JSON by `read`.
 */
export class ToolCallStream {
    private buffer = "";
    private state: "content" | "name" | "arguments" | "between" | "text" | "dropped" = "content";
    /** Calls completed so far. */
    private completed = 0;
    private name = "";
    /** Index in `buffer` up to which arguments went out (null: none yet). */
    private sent: number | null = null;
    /** Where the search for the call's end goes on from: not again over what cannot hold its start (a long call streamed in pieces). */
    private suffixSearchFrom = 0;
    /** A format without a suffix: where the arguments' JSON object ends, scanned as the call streams (jsonObjectEnd.ts). */
    private objectScan: JsonObjectScan | null = null;
    /** Python's notation (LFM2's): where the arguments' closing `)` is, scanned as the call streams (pythonCalls.ts). */
    private pythonScan: PythonArgumentsScan | null = null;
    /** Between calls of a list format (`format.list`): the list is still open (a separator or its end comes next). */
    private inList = false;
    /** Between calls of an object-call format (Llama 3.x): the call's object was closed. */
    private closed = false;
    /** Held back for a possibly malformed first call: the whitespace before it and its text so far. */
    private heldText = "";
    private readonly start: CallStart;
    /** In content: how many characters at the buffer's start are whitespace held back from the last piece. */
    private heldSpace = 0;
    /** In a call's arguments: the run of whitespace and suffix characters at the end (RunBack), where a suffix may have begun. */
    private readonly suffixRun: RunBack;
    /** In a call's arguments: the first place of the suffix's first character in that run (-1: none), the run's start it is for, and how far it was looked for. */
    private runLead = -1;
    private runStart = -1;
    private leadSeenTo = 0;
    /** In a call's arguments: the whitespace before a partial suffix (RunBack). */
    private readonly spaceRun = new RunBack((char) => /\s/.test(char));
    /** A JSON list's call: where its arguments' object closed (the call's `}` may come in a later piece). */
    private objectEnd: number | null = null;

    constructor(
        private readonly format: ToolCallFormat,
        private readonly names: ReadonlySet<string>,
        private readonly hold: boolean,
        private readonly emit: (event: ToolCallStreamEvent) => void,
        private readonly read: ArgumentsReader = jsonArguments
    ) {
        this.start = callStartOf(format);
        const suffixChars = new Set(format.suffix);
        this.suffixRun = new RunBack((char) => /\s/.test(char) || suffixChars.has(char));
    }

    /** Argument fragments go out as generated: a forced call whose arguments are the JSON the answer gives. */
    private get streamsArguments() {
        return !this.hold && argumentsAreJson(this.format);
    }

    push(text: string) {
        this.buffer += text;
        this.process();
    }

    /** End of generation: what was held back goes out. */
    finish() {
        this.process();
        switch (this.state) {
            case "content":
                // A forced call cut before its prefix was whole: the held start of it is not content (parseToolCalls).
                if (!this.hold && this.start.partialAtEnd(this.buffer) > 0)
                    break;
                this.emitContent(this.buffer);
                break;
            case "text":
                this.emitContent(this.buffer);
                break;
            case "name": case "arguments":
                if (this.hold) {
                    // Unfinished: not a call (all content when it is the first one).
                    this.malformed();
                    this.emitContent(this.buffer);
                } else if (this.state === "arguments" && this.streamsArguments)
                    // A forced call cut short: the arguments written so far.
                    this.sendArguments(this.buffer.trimEnd().length);
                else if (this.state === "arguments") {
                    const cut = this.read(this.name, this.buffer, true);
                    if (cut != null && cut !== "")
                        this.emit({type: "arguments", index: this.completed, fragment: cut});
                }
                break;
        }
        this.buffer = "";
    }

    private process() {
        const {suffix} = this.format;
        for (;;) {
            switch (this.state) {
                case "text":
                    this.emitContent(this.buffer);
                    this.buffer = "";
                    return;
                case "dropped":
                    this.buffer = "";
                    return;
                case "content": {
                    const found = this.start.find(this.buffer, 0);
                    if (found == null) {
                        const partial = this.start.partialAtEnd(this.buffer);
                        // The whitespace held back from the last piece is not walked again (a long run of it streamed in pieces).
                        const keep = this.buffer.length - spaceRunStart(this.buffer, this.buffer.length - partial, this.heldSpace);
                        this.emitContent(this.buffer.slice(0, this.buffer.length - keep));
                        this.buffer = this.buffer.slice(this.buffer.length - keep);
                        this.heldSpace = keep - partial;
                        return;
                    }
                    const before = this.buffer.slice(0, found.start);
                    this.emitContent(before.trimEnd());
                    this.heldText = before.slice(before.trimEnd().length);
                    this.startCall(found.start, found.end);
                    continue;
                }
                case "between": {
                    if (this.format.list != null && this.inList) {
                        // After a call in a list: the next call's name, or the list's end (parseToolCalls' afterListedCall).
                        const after = afterListedCall(this.buffer, 0, this.format);
                        if (after === "partial")
                            return;
                        if (after == null)
                            this.state = "dropped";
                        else {
                            this.buffer = this.buffer.slice(after.at);
                            if (after.next)
                                this.state = "name";
                            else
                                this.inList = false;
                        }
                        continue;
                    }
                    // Llama 3.x's call object closed after its arguments, and its `;` between calls (parseToolCalls' afterObjectCall).
                    if (isObjectCall(this.format)) {
                        const after = this.closed ? 0 : afterObjectCall(this.buffer, 0, this.format);
                        if (after > 0) {
                            this.buffer = this.buffer.slice(after);
                            this.closed = true;
                        } else if (this.closed)
                            this.buffer = this.buffer.replace(/^[\s;]+/, "");
                        if (!this.closed && this.buffer.trim() === "")
                            return;
                    }
                    const rest = this.buffer.trimStart();
                    const next = this.start.at(rest, 0);
                    if (next != null) {
                        const skipped = this.buffer.length - rest.length;
                        this.startCall(skipped, skipped + next);
                        continue;
                    }
                    if (rest !== "" && this.start.partialAtEnd(rest) !== rest.length)
                        this.state = "dropped";
                    if (this.state === "dropped")
                        continue;
                    return;
                }
                case "name": {
                    const nameEnd = findNameEnd(this.buffer, this.format, 0);
                    // A JSON object's first key that is not a call's (`{"name": "Bob", "age": 42}`): content at once, not held to the end.
                    if (nameEnd === "never") {
                        this.malformed();
                        continue;
                    }
                    if (nameEnd == null)
                        return;
                    this.name = callName(this.buffer.slice(0, nameEnd.start), this.format);
                    if (!this.names.has(this.name)) {
                        this.malformed();
                        continue;
                    }
                    this.heldText += this.buffer.slice(0, nameEnd.end);
                    this.buffer = this.buffer.slice(nameEnd.end);
                    this.state = "arguments";
                    this.suffixSearchFrom = 0;
                    this.objectScan = this.format.suffix === "" || (this.format.list != null && argumentsAreJson(this.format)) ? new JsonObjectScan() : null;
                    this.pythonScan = this.format.notation === "python" ? new PythonArgumentsScan() : null;
                    this.objectEnd = null;
                    this.suffixRun.reset();
                    this.runLead = this.runStart = -1;
                    this.leadSeenTo = 0;
                    this.spaceRun.reset();
                    this.sent = null;
                    if (!this.hold)
                        this.emit({type: "call", index: this.completed, name: this.name});
                    continue;
                }
                case "arguments": {
                    const end = this.argumentsEnd();
                    if (end === "never") {
                        this.malformed();
                        continue;
                    }
                    if (end == null) {
                        // Where the suffix search goes on from; not needed while a scan reads where the arguments end.
                        // The runs walked back over are remembered (RunBack): a long run of whitespace is walked once.
                        if (this.pythonScan == null && (this.objectScan == null || this.objectEnd != null))
                            this.suffixSearchFrom = Math.max(this.objectEnd ?? 0, this.suffixResume());
                        // Up to the arguments' object where it closed already (a JSON list's call: its `}` still to come),
                        // else up to a partial suffix and the whitespace before it.
                        if (this.streamsArguments)
                            this.sendArguments(this.objectEnd ?? this.spaceRun.from(this.buffer, this.buffer.length - partialPrefixAtEnd(this.buffer, suffix)));
                        return;
                    }
                    const argumentsText = this.read(this.name, this.buffer.slice(0, end.start), false);
                    if (argumentsText == null) {
                        this.malformed();
                        continue;
                    }
                    if (this.hold)
                        this.emit({type: "call", index: this.completed, name: this.name});
                    if (this.streamsArguments)
                        this.sendArguments(this.buffer.slice(0, end.start).trimEnd().length);
                    else
                        this.emit({type: "arguments", index: this.completed, fragment: argumentsText});
                    this.completed++;
                    this.heldText = "";
                    this.buffer = this.buffer.slice(end.end);
                    if (this.format.betweenCalls !== "" && this.buffer.startsWith(this.format.betweenCalls))
                        this.buffer = this.buffer.slice(this.format.betweenCalls.length);
                    this.state = "between";
                    this.closed = false;
                    this.inList = this.format.list != null;
                    continue;
                }
            }
        }
    }

    /**
     * Where the search for the suffix goes on from once more text comes: a suffix (with any whitespace between its tags,
     * findPiece's flexible match) starts with its first character, inside the run of whitespace and suffix characters
     * that ends the text; so at the first such character in that run, else after the text. Both looked for in the new
     * text only (a run that starts again starts in the new text): a long run streamed in pieces is walked once.
     */
    private suffixResume(): number {
        const lead = this.format.suffix.trimStart()[0];
        const runStart = this.suffixRun.from(this.buffer, this.buffer.length);
        if (runStart !== this.runStart) {
            this.runStart = runStart;
            this.runLead = -1;
            this.leadSeenTo = runStart;
        }
        if (this.runLead < 0)
            this.runLead = this.buffer.indexOf(lead, this.leadSeenTo);
        this.leadSeenTo = this.buffer.length;
        return this.runLead >= 0 ? this.runLead : this.buffer.length;
    }

    /** Where the current call's arguments end in the buffer (findCallEnd's rules, scanned as the call streams), or null: not yet. */
    private argumentsEnd(): {start: number, end: number} | "never" | null {
        if (this.pythonScan != null) {
            const close = this.pythonScan.scan(this.buffer);
            return close == null ? null : close === -1 ? "never" : {start: close, end: close + 1};
        }
        if (this.objectScan != null) {
            // A scan that found the object's end is not asked again (it would scan on past it).
            this.objectEnd ??= this.objectScan.scan(this.buffer);
            if (this.objectEnd == null)
                return null;
            return this.format.suffix === "" ? {start: this.objectEnd, end: this.objectEnd}
                : jsonItemEnd(this.buffer, this.objectEnd, this.format, Math.max(this.objectEnd, this.suffixSearchFrom));
        }
        return findPiece(this.buffer, this.format.suffix, this.suffixSearchFrom, true);
    }

    private startCall(start: number, end: number) {
        this.heldText += this.buffer.slice(start, end);
        this.buffer = this.buffer.slice(end);
        this.state = "name";
    }

    /** The current call is not a call: with none before it everything is content, else the rest is dropped. */
    private malformed() {
        if (this.completed > 0) {
            this.state = "dropped";
            return;
        }
        this.buffer = this.heldText + this.buffer;
        this.heldText = "";
        this.state = "text";
    }

    private sendArguments(upTo: number) {
        const start = this.sent ?? this.buffer.length - this.buffer.trimStart().length;
        if (upTo > start) {
            this.emit({type: "arguments", index: this.completed, fragment: this.buffer.slice(start, upTo)});
            this.sent = upTo;
        }
    }

    private emitContent(text: string) {
        if (text !== "" && this.completed === 0)
            this.emit({type: "content", text});
    }
}

/**
 * Where a run of the characters `inRun` takes starts that ends at `end`, in a text that only grows (a call's arguments
 * streamed in pieces): what was walked for an earlier, shorter text is not walked again, so a long run streamed in
 * pieces is walked once. The suffix search resumes before such a run of whitespace and the suffix's own characters
 * (a suffix written with whitespace between its tags, findPiece's flexible match, holds nothing else).
 */
class RunBack {
    private end = 0;
    private start = 0;

    constructor(private readonly inRun: (char: string) => boolean) {}

    reset() {
        this.end = this.start = 0;
    }

    from(text: string, end: number): number {
        const floor = end >= this.end ? this.end : 0;
        let at = end;
        while (at > floor && this.inRun(text[at - 1]))
            at--;
        const start = at === floor && floor > 0 ? this.start : at;
        this.end = end;
        this.start = start;
        return start;
    }
}

/** Where the whitespace before `end` starts, the text's first `known` characters being whitespace already. */
function spaceRunStart(text: string, end: number, known: number): number {
    let at = end;
    while (at > known && /\s/.test(text[at - 1]))
        at--;
    return at === known ? 0 : at;
}
