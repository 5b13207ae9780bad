import type { LlamaModel } from "node-llama-cpp";

type Match = {length: number, control: boolean, lstrip: boolean};
type TrieNode = {next: Map<number, TrieNode>, match: Match | null};

/**
 * The texts llama.cpp takes as special tokens in text tokenized with special tokens (a rendered template): control,
 * user-defined and unknown tokens, as the model's own token attributes say (llama.cpp marks some tokens control
 * whatever the GGUF's token types say), matched with their vocabulary text. A trie of them answers two questions
 * in one pass over a text:
 *
 * - `hasControlText`: does a text hold a control (or unknown) token's text? As template text it would become that
 *   token; as plain text (message content) it stays text. User-defined tokens are matched in plain text too.
 * - `cuts`: where may a long text be cut so that each piece, tokenized on its own, gives the tokens it has within
 *   the whole?
 */
export class SpecialTokenTexts {
    private readonly root: TrieNode = {next: new Map(), match: null};
    private readonly longest: number;

    private constructor(entries: readonly {text: string, control: boolean, lstrip: boolean}[]) {
        let longest = 0;
        for (const {text, control, lstrip} of entries) {
            if (text === "")
                continue;
            let node = this.root;
            for (let index = 0; index < text.length; index++) {
                const code = text.charCodeAt(index);
                let next = node.next.get(code);
                if (next == null)
                    node.next.set(code, next = {next: new Map(), match: null});
                node = next;
            }
            // One text, one token (a vocabulary's texts are distinct); a control token wins if not.
            if (node.match == null || control)
                node.match = {length: text.length, control, lstrip};
            longest = Math.max(longest, text.length);
        }
        this.longest = longest;
    }

    /** The model's special tokens (a few milliseconds per 100,000 tokens of vocabulary). */
    static of(model: LlamaModel): SpecialTokenTexts {
        const texts = model.fileInfo.metadata.tokenizer?.ggml?.tokens as string[] | undefined ?? [];
        const entries: {text: string, control: boolean, lstrip: boolean}[] = [];
        for (let id = 0; id < texts.length; id++) {
            const attributes = model.getTokenAttributes(id as never);
            if (attributes.control || attributes.unknown || attributes.userDefined)
                entries.push({text: texts[id], control: attributes.control || attributes.unknown, lstrip: attributes.lstrip});
        }
        return new SpecialTokenTexts(entries);
    }

    /** Whether `text` holds the text of a control or unknown token (anywhere, even overlapped by another). */
    hasControlText(text: string): boolean {
        for (let at = 0; at < text.length; at++)
            if (this.root.next.has(text.charCodeAt(at)) && this.matchesAt(text, at, (match) => match.control))
                return true;
        return false;
    }

    /**
     * Offsets at which `text` may be cut, at most one per `every` characters: right before a special token (the
     * longest starting there) that does not take the whitespace before it (`lstrip`) and that no other special
     * token's text overlaps. llama.cpp splits text at its special tokens before tokenizing the pieces between them,
     * so a piece that starts with one tokenizes as it does within the whole.
     */
    cuts(text: string, every: number): number[] {
        const cuts: number[] = [];
        let from = every;
        for (let at = every; at < text.length; at++) {
            if (at < from || !this.root.next.has(text.charCodeAt(at)))
                continue;
            const match = this.longestAt(text, at);
            if (match == null || match.lstrip || this.overlapped(text, at))
                continue;
            cuts.push(at);
            from = at + every;
        }
        return cuts;
    }

    /** Whether a special token's text starts before `at` and ends after it. */
    private overlapped(text: string, at: number): boolean {
        for (let start = Math.max(0, at - this.longest + 1); start < at; start++)
            if (this.matchesAt(text, start, (match) => start + match.length > at))
                return true;
        return false;
    }

    private longestAt(text: string, at: number): Match | null {
        let found: Match | null = null;
        this.matchesAt(text, at, (match) => {
            found = match;
            return false;
        });
        return found;
    }

    /** Walks the trie from `at`, calling `test` on each token text found there (shortest first) until it returns true. */
    private matchesAt(text: string, at: number, test: (match: Match) => boolean): boolean {
        let node: TrieNode | undefined = this.root;
        for (let index = at; index < text.length; index++) {
            node = node.next.get(text.charCodeAt(index));
            if (node == null)
                return false;
            if (node.match != null && test(node.match))
                return true;
        }
        return false;
    }
}
