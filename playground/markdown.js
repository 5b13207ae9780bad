// @ts-check
/**
 * Markdown as a model writes it (paragraphs, headings, lists, quotes, fenced code, inline code, bold,
 * italics, links), turned into a tree of a few allowed tags and then into DOM nodes: model text only ever
 * becomes text nodes, so HTML in the output (`<script>`, `<img onerror>`) is shown, never run, and a link
 * is a link only to http(s) or mailto. No HTML string is ever parsed.
 */

/** @typedef {{tag: AllowedTag, attrs?: Record<string, string>, children: MdChild[]}} MdNode */
/** @typedef {MdNode | string} MdChild */
/** @typedef {"p" | "h1" | "h2" | "h3" | "h4" | "pre" | "code" | "strong" | "em" | "a" | "ul" | "ol" | "li" | "blockquote"} AllowedTag */

export const allowedTags = new Set(["p", "h1", "h2", "h3", "h4", "pre", "code", "strong", "em", "a", "ul", "ol", "li", "blockquote"]);

/** @param {string} url */
export function safeHref(url) {
    return /^(https?:\/\/|mailto:)/i.test(url.trim()) ? url.trim() : null;
}

/** @typedef {{steps: number}} Meter A count of the parser's steps (positions scanned, lines read), for tests of its linear time. */

const backtick = 0x60, star = 0x2a, openBracket = 0x5b, closeBracket = 0x5d, openParen = 0x28, closeParen = 0x29;

/**
 * Whether a UTF-16 code unit is what `\s` matches in a JavaScript regular expression.
 * @param {number} code
 */
export function isSpace(code) {
    return code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a)
        || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
}

/**
 * Inline Markdown: `code`, **bold**, *italics*, [label](url). Linear time: each opener finds its closer in a table of
 * "the next `, *, ] and ) or space at or after each position" built once from right to left, instead of a search that
 * a regular expression repeats from every opener (`"[a](".repeat(20000)` took 4.9 s that way). The result is the one
 * the regular expression `` /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[([^\]]+)\]\(([^)\s]+)\)/g `` gives, tried
 * left to right with the inner parts parsed again (test/unit/playgroundMarkdownLinear.test.ts compares them).
 * @param {string} text
 * @param {Meter} [meter]
 * @returns {MdChild[]}
 */
export function parseInline(text, meter) {
    const length = text.length;
    const nextBacktick = new Int32Array(length + 1), nextStar = new Int32Array(length + 1);
    const nextCloseBracket = new Int32Array(length + 1), nextUrlEnd = new Int32Array(length + 1);
    nextBacktick[length] = nextStar[length] = nextCloseBracket[length] = nextUrlEnd[length] = length;
    for (let at = length - 1; at >= 0; at--) {
        const code = text.charCodeAt(at);
        nextBacktick[at] = code === backtick ? at : nextBacktick[at + 1];
        nextStar[at] = code === star ? at : nextStar[at + 1];
        nextCloseBracket[at] = code === closeBracket ? at : nextCloseBracket[at + 1];
        nextUrlEnd[at] = code === closeParen || isSpace(code) ? at : nextUrlEnd[at + 1];
    }
    if (meter != null)
        meter.steps += length;
    /** The first index at or after `at` in `table`, `length` if none (or if `at` is past the end). */
    const next = (/** @type {Int32Array} */ table, /** @type {number} */ at) => at >= length ? length : table[at];

    /**
     * The nodes of text[from, to), as the regular expression would find them in that slice alone.
     * @param {number} from
     * @param {number} to
     * @returns {MdChild[]}
     */
    const scan = (from, to) => {
        /** @type {MdChild[]} */
        const out = [];
        let last = from;
        let at = from;
        while (at < to) {
            if (meter != null)
                meter.steps++;
            const code = text.charCodeAt(at);
            const after = at + 1 < to ? text.charCodeAt(at + 1) : -1;
            /** @type {MdChild | null} */
            let node = null;
            let end = at;
            if (code === backtick) {
                const close = next(nextBacktick, at + 1);
                if (close < to && close > at + 1) {
                    node = {tag: "code", children: [text.slice(at + 1, close)]};
                    end = close + 1;
                }
            } else if (code === star) {
                const close = next(nextStar, at + 2);
                if (after === star && close > at + 2 && close + 1 < to && text.charCodeAt(close + 1) === star) {
                    node = {tag: "strong", children: scan(at + 2, close)};
                    end = close + 2;
                } else if (after !== -1 && after !== star && !isSpace(after) && close < to) {
                    node = {tag: "em", children: scan(at + 1, close)};
                    end = close + 1;
                }
            } else if (code === openBracket) {
                const labelEnd = next(nextCloseBracket, at + 1);
                if (labelEnd > at + 1 && labelEnd + 1 < to && text.charCodeAt(labelEnd + 1) === openParen) {
                    const urlEnd = next(nextUrlEnd, labelEnd + 2);
                    if (urlEnd < to && urlEnd > labelEnd + 2 && text.charCodeAt(urlEnd) === closeParen) {
                        const href = safeHref(text.slice(labelEnd + 2, urlEnd));
                        node = href == null ? text.slice(at, urlEnd + 1) : {tag: "a", attrs: {href}, children: scan(at + 1, labelEnd)};
                        end = urlEnd + 1;
                    }
                }
            }
            if (node == null) {
                at++;
                continue;
            }
            if (at > last)
                out.push(text.slice(last, at));
            out.push(node);
            last = at = end;
        }
        if (last < to)
            out.push(text.slice(last, to));
        return out;
    };
    return scan(0, length);
}

/**
 * What a line starts (tried in this order; a line that matches none is paragraph text, or blank). Anchored, each
 * tried once per line: linear in the line's length. A code block ends at the next line matching `fence`.
 */
export const linePatterns = {
    fence: /^\s*```\s*([\w+-]*)/,
    heading: /^(#{1,4})\s+(.*)$/,
    item: /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/,
    quote: /^>\s?(.*)$/
};

/**
 * Block Markdown: one pass over the lines, each line matched against anchored patterns once (linear in its length).
 * @param {string} markdown
 * @param {Meter} [meter]
 * @returns {MdNode[]}
 */
export function parseMarkdown(markdown, meter) {
    /** @type {MdNode[]} */
    const blocks = [];
    const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
    /** @type {string[]} */
    let paragraph = [];
    const endParagraph = () => {
        if (paragraph.length > 0)
            blocks.push({tag: "p", children: parseInline(paragraph.join("\n"), meter)});
        paragraph = [];
    };
    for (let index = 0; index < lines.length; index++) {
        const line = lines[index];
        if (meter != null)
            meter.steps++;
        const fence = linePatterns.fence.exec(line);
        if (fence != null) {
            endParagraph();
            const code = [];
            while (++index < lines.length && !linePatterns.fence.test(lines[index])) {
                if (meter != null)
                    meter.steps++;
                code.push(lines[index]);
            }
            /** @type {MdNode} */
            const codeNode = {tag: "code", children: [code.join("\n")]};
            if (fence[1] !== "")
                codeNode.attrs = {class: `language-${fence[1]}`};
            blocks.push({tag: "pre", children: [codeNode]});
            continue;
        }
        const heading = linePatterns.heading.exec(line);
        if (heading != null) {
            endParagraph();
            blocks.push({tag: /** @type {AllowedTag} */ (`h${heading[1].length}`), children: parseInline(heading[2], meter)});
            continue;
        }
        const item = linePatterns.item.exec(line);
        if (item != null) {
            endParagraph();
            /** @type {AllowedTag} */
            const tag = item[1] != null ? "ul" : "ol";
            const last = blocks.at(-1);
            /** @type {MdNode} */
            const list = last != null && last.tag === tag ? last : {tag, children: []};
            if (list !== last)
                blocks.push(list);
            list.children.push({tag: "li", children: parseInline(item[3], meter)});
            continue;
        }
        const quote = linePatterns.quote.exec(line);
        if (quote != null) {
            endParagraph();
            const last = blocks.at(-1);
            if (last?.tag === "blockquote") {
                // One by one: a spread of a long line's many nodes would pass the engine's limit on arguments.
                last.children.push("\n");
                for (const node of parseInline(quote[1], meter))
                    last.children.push(node);
            } else
                blocks.push({tag: "blockquote", children: parseInline(quote[1], meter)});
            continue;
        }
        if (line.trim() === "")
            endParagraph();
        else
            paragraph.push(line);
    }
    endParagraph();
    return blocks;
}

/**
 * DOM nodes for a parsed tree: only allowed tags, only `href` (checked again) and a `language-` class.
 * @param {MdChild[]} nodes
 * @param {Document} doc
 * @returns {Node[]}
 */
export function toDom(nodes, doc) {
    return nodes.map((node) => {
        if (typeof node === "string")
            return doc.createTextNode(node);
        if (!allowedTags.has(node.tag))
            return doc.createTextNode("");
        const element = doc.createElement(node.tag);
        const href = node.tag === "a" ? safeHref(node.attrs?.href ?? "") : null;
        if (href != null) {
            element.setAttribute("href", href);
            element.setAttribute("rel", "noopener noreferrer");
            element.setAttribute("target", "_blank");
        }
        const language = node.attrs?.class;
        if (language != null && /^language-[\w+-]+$/.test(language))
            element.setAttribute("class", language);
        for (const child of toDom(node.children, doc))
            element.append(child);
        return element;
    });
}
