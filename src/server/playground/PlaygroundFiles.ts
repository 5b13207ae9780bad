import fs from "node:fs";
import path from "node:path";

/** One file of the page, read once at startup. */
export type PlaygroundFile = {bytes: Buffer, type: string};

const types: Record<string, string> = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml"
};

/**
 * The playground's files (the `playground/` folder: plain ES modules the browser loads as they are, no build
 * step), read into memory at startup: a few dozen kilobytes, served from memory, and only these names.
 */
export class PlaygroundFiles {
    private constructor(readonly files: ReadonlyMap<string, PlaygroundFile>) {}

    static load(folder: string): PlaygroundFiles {
        const files = new Map<string, PlaygroundFile>();
        for (const name of fs.readdirSync(folder)) {
            const type = types[path.extname(name)];
            if (type != null)
                files.set(name, {bytes: fs.readFileSync(path.join(folder, name)), type});
        }
        if (!files.has("index.html"))
            throw new Error(`The playground folder ${folder} has no index.html`);
        return new PlaygroundFiles(files);
    }

    get(name: string): PlaygroundFile | undefined {
        return this.files.get(name);
    }

    /** Bytes of everything the page loads. */
    get totalBytes(): number {
        return [...this.files.values()].reduce((sum, file) => sum + file.bytes.length, 0);
    }
}
