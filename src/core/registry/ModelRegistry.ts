import type { ModelEntry } from "./ModelEntry.js";

/**
 * Resolves the names a client may send (concrete id, alias, `<family>-latest`) to one concrete
 * model entry. Responses always report `entry.id`, never the name that was asked for.
 */
export class ModelRegistry {
    private all: readonly ModelEntry[];
    private byName = new Map<string, ModelEntry>();

    constructor(entries: readonly ModelEntry[]) {
        this.all = entries;
        this.index();
    }

    get entries(): readonly ModelEntry[] {
        return this.all;
    }

    /**
     * Registers models added while the server runs (pulled from the hub). An entry whose id is taken is skipped; an
     * alias another model answers to stays that model's. Returns the entries registered.
     */
    add(entries: readonly ModelEntry[]): ModelEntry[] {
        const added: ModelEntry[] = [];
        for (const entry of entries) {
            if (this.byName.has(entry.id) || added.some((other) => other.id === entry.id))
                continue;
            added.push({...entry, aliases: entry.aliases.filter((alias) => !this.byName.has(alias) && alias !== entry.id)});
        }
        this.all = [...this.all, ...added];
        this.index();
        return added;
    }

    private index() {
        const entries = this.all;
        this.byName = new Map();
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
