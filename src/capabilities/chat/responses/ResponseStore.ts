import type { Readable } from "node:stream";
import { pacedBody } from "../../../core/http/bodyPieces.js";
import type { InputItem, OutputItem, ResponseObject } from "./ResponsesWire.js";
import { StoredItemsJson } from "./StoredItemsJson.js";

/**
 * A stored response: what continues it (its input, output and the conversation before it, as objects) and what
 * reads return (its JSON, serialized once when stored, so that a GET of a large one writes bytes and serializes
 * nothing on the main thread).
 */
export type StoredResponse = {
    id: string;
    /** The identity (hash) of the key that created it; null on a server without keys. */
    owner: string | null;
    /** The response as `GET /v1/responses/{id}` returns it. */
    json: Buffer;
    /** Its input items with their ids, and their JSON (`input_items` lists them in either order). */
    input: (InputItem & {id: string})[];
    inputJson: StoredItemsJson;
    output: OutputItem[];
    /** The conversation it continued (`previous_response_id`). */
    history: InputItem[];
    /** What it counts against its owner's share: its JSON, its input's, and the conversation it continued (the previous response's count). */
    bytes: number;
};

/** What one key may keep. */
export type ResponseStoreLimits = {maxResponses: number, maxBytes: number};

/** The responses of all keys together are bounded to this many keys' shares. */
const sharesInAll = 4;

/** One key's responses, oldest first. */
class Shelf {
    readonly responses = new Map<string, StoredResponse>();
    bytes = 0;
}

/**
 * The responses kept for `previous_response_id` and `GET /v1/responses/{id}` (`store`, default true): in memory, lost
 * on restart, visible only to the key that created them (its identity, the key's hash: a new key given a revoked
 * key's name reads nothing of the old one's). Each key has its own share (`limits`: by default 1,000 responses and
 * 64 MB), its oldest evicted first when a new one does not fit, so that one key's flood never pushes out another's.
 * All keys together hold at most four shares; past that the key holding the most gives way first (a key within its
 * fair share of the total never loses a response to another). A response larger than a share is not stored, and
 * says so (`store: false`).
 */
export class ResponseStore {
    private readonly shelves = new Map<string | null, Shelf>();
    private bytes = 0;
    private count = 0;

    constructor(private readonly limits: ResponseStoreLimits) {}

    /**
     * Stores a finished response (the one `previous`, if any, continued) and says whether it did: false when it is
     * larger than a key's share, or the share is 0 (the caller then answers `store: false`).
     */
    put(entry: {response: ResponseObject, input: (InputItem & {id: string})[], previous: StoredResponse | null, owner: string | null}): boolean {
        if (this.limits.maxBytes <= 0 || this.limits.maxResponses <= 0)
            return false;
        const json = Buffer.from(JSON.stringify(entry.response));
        const inputJson = StoredItemsJson.of(entry.input);
        const bytes = json.length + inputJson.bytes.length + (entry.previous?.bytes ?? 0);
        if (bytes > this.limits.maxBytes)
            return false;
        const stored: StoredResponse = {
            id: entry.response.id, owner: entry.owner, json, input: entry.input, inputJson, output: entry.response.output,
            history: entry.previous != null ? ResponseStore.conversationOf(entry.previous) : [], bytes
        };
        this.delete(stored.id, stored.owner);
        let shelf = this.shelves.get(entry.owner);
        if (shelf == null)
            this.shelves.set(entry.owner, shelf = new Shelf());
        shelf.responses.set(stored.id, stored);
        shelf.bytes += bytes;
        this.bytes += bytes;
        this.count++;
        while ((shelf.responses.size > this.limits.maxResponses || shelf.bytes > this.limits.maxBytes) && this.evictOldest(shelf, stored))
            ;
        for (;;) {
            const by = this.count > sharesInAll * this.limits.maxResponses ? "count" : this.bytes > sharesInAll * this.limits.maxBytes ? "bytes" : null;
            const fullest = by != null ? this.fullest(by, stored) : null;
            if (fullest == null || !this.evictOldest(fullest, stored))
                break;
        }
        return true;
    }

    get(id: string, owner: string | null): StoredResponse | undefined {
        return this.shelves.get(owner)?.responses.get(id);
    }

    /** An item of one of the owner's stored responses (its input or output), by its id; newest response first. */
    item(id: string, owner: string | null): InputItem | undefined {
        const responses = [...this.shelves.get(owner)?.responses.values() ?? []];
        for (const stored of responses.reverse()) {
            const found = stored.output.find((item) => (item as {id?: string}).id === id) ?? stored.input.find((item) => item.id === id);
            if (found != null)
                return structuredClone(found) as InputItem;
        }
        return undefined;
    }

    delete(id: string, owner: string | null): boolean {
        const shelf = this.shelves.get(owner);
        const stored = shelf?.responses.get(id);
        if (shelf == null || stored == null)
            return false;
        shelf.responses.delete(id);
        shelf.bytes -= stored.bytes;
        this.bytes -= stored.bytes;
        this.count--;
        if (shelf.responses.size === 0)
            this.shelves.delete(owner);
        return true;
    }

    /** How many responses and bytes a key holds now (tests, metrics). */
    usage(owner: string | null): {responses: number, bytes: number} {
        const shelf = this.shelves.get(owner);
        return {responses: shelf?.responses.size ?? 0, bytes: shelf?.bytes ?? 0};
    }

    /**
     * The conversation a continuation of `stored` starts from: its history, its input and its output (output items are
     * input items, with their reasoning text, namespaces and custom tool inputs).
     */
    static conversationOf(stored: StoredResponse): InputItem[] {
        return [...stored.history, ...stored.input, ...stored.output];
    }

    /**
     * The body of `GET /v1/responses/{id}/input_items` (OpenAI's list shape, newest first unless `ascending`), from
     * the items' stored JSON: a stream of the stored bytes, nothing serialized again.
     */
    static inputItemsBody(stored: StoredResponse, ascending: boolean): {body: Readable, length: number} {
        const ids = stored.input.map((item) => item.id);
        const [first, last] = ascending ? [ids[0], ids.at(-1)] : [ids.at(-1), ids[0]];
        const head = Buffer.from("{\"object\":\"list\",\"data\":[");
        const tail = Buffer.from(`],"first_id":${JSON.stringify(first ?? null)},"last_id":${JSON.stringify(last ?? null)},"has_more":false}`);
        const body = pacedBody((function* () {
            yield head;
            yield* stored.inputJson.joined(ascending);
            yield tail;
        })());
        return {body, length: head.length + stored.inputJson.bytes.length + tail.length};
    }

    /** Evicts the oldest response of `shelf` but `keep` (the one being stored); false when there is none. */
    private evictOldest(shelf: Shelf, keep: StoredResponse): boolean {
        for (const stored of shelf.responses.values())
            if (stored !== keep)
                return this.delete(stored.id, stored.owner);
        return false;
    }

    /** The key holding the most (responses or bytes) that has something other than `keep` to give. */
    private fullest(by: "count" | "bytes", keep: StoredResponse): Shelf | null {
        const size = (shelf: Shelf) => by === "count" ? shelf.responses.size : shelf.bytes;
        let fullest: Shelf | null = null;
        for (const shelf of this.shelves.values())
            if (shelf.responses.size > (shelf.responses.get(keep.id) === keep ? 1 : 0) && (fullest == null || size(shelf) > size(fullest)))
                fullest = shelf;
        return fullest;
    }
}
