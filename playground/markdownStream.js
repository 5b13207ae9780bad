// @ts-check
import { linePatterns, parseMarkdown, toDom } from "./markdown.js";

/**
 * Where streamed Markdown may be cut so that its parts, parsed apart, give the blocks the whole gives: the start of
 * a complete line that begins a paragraph, a heading or a code fence, outside a code block, with no paragraph open
 * before it. (Lists and quotes join an earlier list or quote even across blank lines, so they never begin a cut.)
 * `scanned` is where the first line not read yet starts, `seen` how far its end has been looked for: each character is
 * looked at once and each line read once, however the text arrives.
 * @typedef {{scanned: number, seen: number, inFence: boolean, paragraphOpen: boolean, cut: number}} Cuts
 */

/** @returns {Cuts} */
export function startCuts() {
    return {scanned: 0, seen: 0, inFence: false, paragraphOpen: false, cut: 0};
}

/**
 * Reads the complete lines of `text` (the same text, grown since the last call) from `cuts.scanned` on and moves
 * `cuts.cut` to the last place it may be cut. Line ends are `\n`, `\r\n` and `\r`, as parseMarkdown reads them.
 * @param {Cuts} cuts
 * @param {string} text
 * @param {import("./markdown.js").Meter} [meter]
 */
export function advanceCuts(cuts, text, meter) {
    let start = cuts.scanned;
    for (;;) {
        let end = Math.max(start, cuts.seen);
        const from = end;
        while (end < text.length && text.charCodeAt(end) !== 0x0a && text.charCodeAt(end) !== 0x0d)
            end++;
        cuts.seen = end;
        if (meter != null)
            meter.steps += end - from + 1;
        // No line end yet, or a `\r` that may be the first half of `\r\n`: the line is not complete.
        if (end >= text.length || (text.charCodeAt(end) === 0x0d && end + 1 >= text.length))
            break;
        const line = text.slice(start, end);
        if (meter != null)
            meter.steps += line.length;
        if (cuts.inFence)
            cuts.inFence = !linePatterns.fence.test(line);
        else if (linePatterns.fence.test(line) || linePatterns.heading.test(line)) {
            if (!cuts.paragraphOpen)
                cuts.cut = start;
            cuts.inFence = linePatterns.fence.test(line);
            cuts.paragraphOpen = false;
        } else if (linePatterns.item.test(line) || linePatterns.quote.test(line) || line.trim() === "")
            cuts.paragraphOpen = false;
        else {
            if (!cuts.paragraphOpen)
                cuts.cut = start;
            cuts.paragraphOpen = true;
        }
        start = end + (text.charCodeAt(end) === 0x0d && text.charCodeAt(end + 1) === 0x0a ? 2 : 1);
        cuts.scanned = start;
    }
}

/** At least this long between two renders of a streamed answer, and at least `renderShare` times the last render's time. */
const minGapMs = 50;
const renderShare = 4;

/**
 * A streamed answer's Markdown in `target` without re-parsing it all on every piece: what lies before the last cut
 * (advanceCuts) is parsed and built once and stays; only the part after it (usually the last paragraph) is parsed
 * again, and at most once per max(50 ms, 4 x the last render's time), so that however long or odd the text (a code
 * block without end, one huge paragraph), rendering takes at most about a fifth of the tab's time.
 * @param {HTMLElement} target
 * @param {(nodes: Node[]) => void} decorate Called with the top-level nodes of each part built (copy buttons on code).
 */
export function markdownView(target, decorate) {
    let text = "";
    let frozen = 0;
    let cuts = startCuts();
    /** @type {Node[]} */
    let tail = [];
    /** @type {ReturnType<typeof setTimeout> | null} */
    let timer = null;
    let lastEnd = -Infinity;
    let lastCost = 0;

    /** @param {string} markdown */
    const build = (markdown) => {
        const nodes = toDom(parseMarkdown(markdown), document);
        decorate(nodes);
        for (const node of nodes)
            target.append(node);
        return nodes;
    };
    const render = () => {
        if (timer != null)
            clearTimeout(timer);
        timer = null;
        const started = performance.now();
        for (const node of tail)
            target.removeChild(node);
        advanceCuts(cuts, text);
        if (cuts.cut > frozen) {
            build(text.slice(frozen, cuts.cut));
            frozen = cuts.cut;
        }
        tail = build(text.slice(frozen));
        lastEnd = performance.now();
        lastCost = lastEnd - started;
    };
    return {
        /** More of the answer: rendered now if the last render is long enough ago, else once it is. @param {string} piece */
        append(piece) {
            text += piece;
            if (timer == null)
                timer = setTimeout(render, Math.max(0, lastEnd + Math.max(minGapMs, renderShare * lastCost) - performance.now()));
        },
        /** The whole answer now (the stream ended, or a stored answer). */
        flush: render,
        /** Starts again with `whole` (a stored answer), rendered now. @param {string} whole */
        show(whole) {
            text = whole;
            frozen = 0;
            cuts = startCuts();
            tail = [];
            target.replaceChildren();
            render();
        }
    };
}
