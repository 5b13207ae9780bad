/** How many characters at the end of `text` could be the start of `tag` (held back while a tag may be arriving). */
export function partialTagLength(text: string, tag: string): number {
    for (let length = Math.min(tag.length - 1, text.length); length > 0; length--)
        if (tag.startsWith(text.slice(text.length - length)))
            return length;
    return 0;
}
