import type { ModelEntry } from "./ModelEntry.js";

/**
 * Resolves the names a client may send (concrete id, alias, `<family>-latest`) to one concrete
 * model entry. Responses always report `entry.id`, never the name that was asked for.
 */
export class ModelRegistry {
    readonly entries: readonly ModelEntry[];
    private readonly byName = new Map<string, ModelEntry>();

    constructor(entries: readonly ModelEntry[]) {
        this.entries = entries;
        for (const entry of entries) {
            this.byName.set(entry.id, entry);
            for (const alias of entry.aliases)
                this.byName.set(alias, entry);
        }
        for (const [family, newest] of newestByFamily(entries))
            this.byName.set(`${family}-latest`, newest);
    }

    /** Every name a client may send (ids, aliases, `<family>-latest`). */
    get names(): string[] {
        return [...this.byName.keys()];
    }

    resolve(name: string): ModelEntry | undefined {
        return this.byName.get(name);
    }

    /** Names that resolve to this entry besides its id, including `<family>-latest` when it is the newest. */
    aliasesOf(entry: ModelEntry): string[] {
        const names: string[] = [];
        for (const [name, target] of this.byName)
            if (target === entry && name !== entry.id)
                names.push(name);
        return names;
    }
}

/** Newest by `released`; ties and undated variants fall back to manifest order (later wins). */
function newestByFamily(entries: readonly ModelEntry[]) {
    const newest = new Map<string, ModelEntry>();
    for (const entry of entries) {
        if (entry.family == null)
            continue;
        const current = newest.get(entry.family);
        if (current == null || (entry.released ?? "") >= (current.released ?? ""))
            newest.set(entry.family, entry);
    }
    return newest;
}
