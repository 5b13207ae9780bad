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

/**
 * @param {string} text
 * @returns {MdChild[]}
 */
export function parseInline(text) {
    /** @type {MdChild[]} */
    const out = [];
    const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
    let last = 0;
    for (const match of text.matchAll(pattern)) {
        const at = match.index ?? 0;
        if (at > last)
            out.push(text.slice(last, at));
        const [whole, code, strong, em, label, url] = match;
        if (code != null)
            out.push({tag: "code", children: [code]});
        else if (strong != null)
            out.push({tag: "strong", children: parseInline(strong)});
        else if (em != null)
            out.push({tag: "em", children: parseInline(em)});
        else {
            const href = safeHref(url);
            out.push(href == null ? whole : {tag: "a", attrs: {href}, children: parseInline(label)});
        }
        last = at + whole.length;
    }
    if (last < text.length)
        out.push(text.slice(last));
    return out;
}

/**
 * @param {string} markdown
 * @returns {MdNode[]}
 */
export function parseMarkdown(markdown) {
    /** @type {MdNode[]} */
    const blocks = [];
    const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
    /** @type {string[]} */
    let paragraph = [];
    const endParagraph = () => {
        if (paragraph.length > 0)
            blocks.push({tag: "p", children: parseInline(paragraph.join("\n"))});
        paragraph = [];
    };
    for (let index = 0; index < lines.length; index++) {
        const line = lines[index];
        const fence = /^\s*```\s*([\w+-]*)/.exec(line);
        if (fence != null) {
            endParagraph();
            const code = [];
            while (++index < lines.length && !/^\s*```/.test(lines[index]))
                code.push(lines[index]);
            /** @type {MdNode} */
            const codeNode = {tag: "code", children: [code.join("\n")]};
            if (fence[1] !== "")
                codeNode.attrs = {class: `language-${fence[1]}`};
            blocks.push({tag: "pre", children: [codeNode]});
            continue;
        }
        const heading = /^(#{1,4})\s+(.*)$/.exec(line);
        if (heading != null) {
            endParagraph();
            blocks.push({tag: /** @type {AllowedTag} */ (`h${heading[1].length}`), children: parseInline(heading[2])});
            continue;
        }
        const item = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(line);
        if (item != null) {
            endParagraph();
            /** @type {AllowedTag} */
            const tag = item[1] != null ? "ul" : "ol";
            const last = blocks.at(-1);
            /** @type {MdNode} */
            const list = last != null && last.tag === tag ? last : {tag, children: []};
            if (list !== last)
                blocks.push(list);
            list.children.push({tag: "li", children: parseInline(item[3])});
            continue;
        }
        const quote = /^>\s?(.*)$/.exec(line);
        if (quote != null) {
            endParagraph();
            const last = blocks.at(-1);
            if (last?.tag === "blockquote")
                last.children.push("\n", ...parseInline(quote[1]));
            else
                blocks.push({tag: "blockquote", children: parseInline(quote[1])});
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
        element.append(...toDom(node.children, doc));
        return element;
    });
}
