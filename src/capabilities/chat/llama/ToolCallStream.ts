import type { ToolCallFormat } from "../ChatEngine.js";
import { afterObjectCall, isObjectCall, JsonObjectScan } from "./jsonObjectEnd.js";
import { afterListedCall, argumentsAreJson, callName, endsMarkupCall, jsonArguments, type ArgumentsReader } from "./parseToolCalls.js";
import { callStartOf, findNameEnd, firstCallStartOf, isShortStart, type CallStart } from "./callMarkers.js";
import { PythonArgumentsScan } from "./pythonCalls.js";
import { SuffixWatch } from "./SuffixWatch.js";

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
    /** The call being read began in its short form (`format.firstStart`). */
    private shortStart = false;
    /** In content: where the search for a call's start goes on from (past a short form that was not a call). */
    private searchFrom = 0;
    /** How far a short form's name may run before it cannot be a declared one (the longest name, and whitespace around it). */
    private readonly longestName: number;
    /** Where the first call starts (the prefix, or its short form where the format allows one). */
    private readonly firstStart: CallStart;
    /** In content: how many characters at the buffer's start are whitespace held back from the last piece. */
    private heldSpace = 0;
    /** In a call's arguments: where its suffix may have begun (SuffixWatch). */
    private readonly suffixWatch: SuffixWatch;
    /** In a call's arguments: the whitespace before where its suffix may begin. */
    private readonly spaceRun = new TrailingSpace();
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
        this.firstStart = firstCallStartOf(format);
        this.longestName = Math.max(0, ...[...names].map((name) => name.length)) + format.paramsPrefix.length + 64;
        this.suffixWatch = new SuffixWatch(format.suffix);
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
                if (!this.hold && this.firstStart.partialAtEnd(this.buffer) > 0)
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
                    const found = this.firstStart.find(this.buffer, this.searchFrom);
                    if (found == null) {
                        const partial = this.firstStart.partialAtEnd(this.buffer);
                        // The whitespace held back from the last piece is not walked again (a long run of it streamed in pieces).
                        const keep = this.buffer.length - spaceRunStart(this.buffer, this.buffer.length - partial, this.heldSpace);
                        this.emitContent(this.buffer.slice(0, this.buffer.length - keep));
                        this.searchFrom = Math.max(0, this.searchFrom - (this.buffer.length - keep));
                        this.buffer = this.buffer.slice(this.buffer.length - keep);
                        this.heldSpace = keep - partial;
                        return;
                    }
                    const before = this.buffer.slice(0, found.start);
                    this.emitContent(before.trimEnd());
                    this.heldText = before.slice(before.trimEnd().length);
                    this.shortStart = isShortStart(this.buffer, found.start, this.format, this.start);
                    this.searchFrom = 0;
                    this.startCall(found.start, found.end);
                    continue;
                }
                case "between": {
                    // Whitespace between calls is no one's: dropped as it comes (not walked again on every piece).
                    this.buffer = this.buffer.trimStart();
                    if (this.format.list != null && this.inList) {
                        // After a call in a list: the next call's name, or the list's end (parseToolCalls' afterListedCall).
                        const after = afterListedCall(this.buffer, 0, this.format);
                        if (after === "partial") {
                            const {separator} = this.format.list;
                            if (separator !== "" && this.buffer.startsWith(separator))
                                this.buffer = separator + this.buffer.slice(separator.length).trimStart();
                            return;
                        }
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
                    const name = nameEnd == null || nameEnd === "never" ? null : callName(this.buffer.slice(0, nameEnd.start), this.format);
                    // A first call's short form (Qwen3-Coder's `<function=` without `<tool_call>`) is one only with a name the
                    // request declares (parseToolCalls' shortStartIsCall): else it is text, searched on from past it.
                    if (this.shortStart && (nameEnd === "never" || (name == null ? this.buffer.length > this.longestName : !this.names.has(name)))) {
                        this.searchFrom = this.heldText.length - this.format.firstStart!.length + 1;
                        this.buffer = this.heldText + this.buffer;
                        this.heldText = "";
                        this.shortStart = false;
                        this.state = "content";
                        continue;
                    }
                    // A JSON object's first key that is not a call's (`{"name": "Bob", "age": 42}`): content at once, not held to the end.
                    if (nameEnd === "never") {
                        this.malformed();
                        continue;
                    }
                    if (nameEnd == null || name == null)
                        return;
                    this.name = name;
                    if (!this.names.has(this.name)) {
                        this.malformed();
                        continue;
                    }
                    this.heldText += this.buffer.slice(0, nameEnd.end);
                    this.buffer = this.buffer.slice(nameEnd.end);
                    this.state = "arguments";
                    this.objectScan = this.format.suffix === "" || (this.format.list != null && argumentsAreJson(this.format)) ? new JsonObjectScan() : null;
                    this.pythonScan = this.format.notation === "python" ? new PythonArgumentsScan() : null;
                    this.objectEnd = null;
                    this.suffixWatch.reset();
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
                        // Up to the arguments' object where it closed already (a JSON list's call: its `}` still to come),
                        // else up to where the suffix may have begun and the whitespace before it (a forced call's grammar
                        // writes the suffix as it is; an argument may hold its text with other whitespace).
                        if (this.streamsArguments) {
                            const suffixMayStart = this.format.suffix === "" || (this.objectScan != null && this.objectEnd == null) ? this.buffer.length : this.suffixWatch.start;
                            this.sendArguments(this.objectEnd ?? this.spaceRun.from(this.buffer, suffixMayStart));
                        }
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
            if (this.format.suffix === "")
                return {start: this.objectEnd, end: this.objectEnd};
        }
        // Searched for only where it may be, once text that could end it came (SuffixWatch); in markup, not inside a value.
        for (;;) {
            const found = this.suffixWatch.find(this.buffer, this.objectEnd ?? 0);
            if (found == null)
                return null;
            if (this.format.parameters == null || endsMarkupCall(this.buffer, 0, found.start, this.format.parameters))
                return this.objectEnd != null ? {start: this.objectEnd, end: found.end} : found;
            this.suffixWatch.skip(found.start + 1);
        }
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
 * Where the whitespace that ends at `end` starts, in a text that only grows (a forced call's arguments streamed in
 * pieces): what was walked for an earlier, shorter text is not walked again, so a long run streamed in pieces is walked once.
 */
class TrailingSpace {
    private end = 0;
    private start = 0;

    reset() {
        this.end = this.start = 0;
    }

    from(text: string, end: number): number {
        const floor = end >= this.end ? this.end : 0;
        let at = end;
        while (at > floor && /\s/.test(text[at - 1]))
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
