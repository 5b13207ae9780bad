import { describe, expect, it } from "vitest";

// The page's modules are plain JavaScript, type-checked on their own (tsc -p playground); here they are loaded as such.
type MdNode = {tag: string, attrs?: Record<string, string>, children: MdChild[]};
type MdChild = MdNode | string;
const markdownModule = "../../playground/markdown.js";
const {allowedTags, parseMarkdown, safeHref} = await import(markdownModule) as {
    allowedTags: Set<string>, parseMarkdown(text: string): MdNode[], safeHref(url: string): string | null
};

// The playground's Markdown renderer against model output that tries to inject HTML: everything becomes a tree of a
// few allowed tags whose only attributes are a checked href and a language class; text stays text.
function walk(nodes: MdChild[], visit: (node: Exclude<MdChild, string>) => void) {
    for (const node of nodes)
        if (typeof node !== "string") {
            visit(node);
            walk(node.children, visit);
        }
}

function textOf(nodes: MdChild[]): string {
    return nodes.map((node) => typeof node === "string" ? node : textOf(node.children)).join("");
}

const attacks = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click]( javascript:alert(1))",
    "[x](data:text/html,<script>alert(1)</script>)",
    "<a href=\"javascript:alert(1)\">x</a>",
    "**<svg onload=alert(1)>**",
    "```html\n<script>alert(1)</script>\n```",
    "<iframe src=//evil>",
    "`<b onclick=alert(1)>`"
];

describe("the playground's Markdown renderer", () => {
    it.each(attacks)("keeps %j as text: only allowed tags, no script-bearing attribute", (attack) => {
        const tree = parseMarkdown(`Before ${attack} after`);
        walk(tree, (node) => {
            expect(allowedTags.has(node.tag)).toBe(true);
            for (const [name, value] of Object.entries(node.attrs ?? {})) {
                expect(["href", "class"]).toContain(name);
                if (name === "href")
                    expect(value).toMatch(/^(https?:\/\/|mailto:)/i);
                else
                    expect(value).toMatch(/^language-[\w+-]+$/);
            }
        });
        // Nothing was dropped: the attack is shown as written (but a link's label).
        if (!attack.startsWith("["))
            expect(textOf(tree).replace(/\n/g, " ")).toContain(attack.replace(/```\w*\n?/g, "").replace(/\n/g, " ").replace(/\*\*|`/g, "").trim());
    });

    it("renders what models write: headings, lists, code, bold, italics, links to http(s) only", () => {
        const tree = parseMarkdown("# Title\n\nSome **bold**, *it*, `code` and [a link](https://example.com).\n\n- one\n- two\n\n1. first\n\n> quoted\n\n```ts\nconst x = 1;\n```");
        expect(tree.map((node) => node.tag)).toEqual(["h1", "p", "ul", "ol", "blockquote", "pre"]);
        const links: string[] = [];
        walk(tree, (node) => node.tag === "a" && links.push(node.attrs!.href));
        expect(links).toEqual(["https://example.com"]);
        expect(tree[5]).toEqual({tag: "pre", children: [{tag: "code", attrs: {class: "language-ts"}, children: ["const x = 1;"]}]});
        expect(safeHref("mailto:a@b.c")).toBe("mailto:a@b.c");
        expect(safeHref("/relative")).toBeNull();
    });
});
