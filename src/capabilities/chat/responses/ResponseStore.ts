import type { InputItem, ResponseObject } from "./ResponsesWire.js";

/** A stored response: the object, the input it was given (with ids) and the conversation before it. */
export type StoredResponse = {response: ResponseObject, input: (InputItem & {id: string})[], history: InputItem[], owner: string | null, bytes: number};

/**
 * The responses kept for `previous_response_id` and `GET /v1/responses/{id}` (`store`, default true):
 * in memory, bounded by count and bytes, the oldest evicted first; visible only to the key that
 * created them (`owner`: the key's name, null on a server without keys). Lost on restart.
 */
export class ResponseStore {
    private readonly responses = new Map<string, StoredResponse>();
    private bytes = 0;

    constructor(private readonly limits: {maxResponses: number, maxBytes: number}) {}

    put(entry: Omit<StoredResponse, "bytes">): void {
        const bytes = Buffer.byteLength(JSON.stringify([entry.response, entry.input, entry.history]));
        if (bytes > this.limits.maxBytes)
            return;
        this.delete(entry.response.id, entry.owner);
        this.responses.set(entry.response.id, {...entry, bytes});
        this.bytes += bytes;
        for (const [id, stored] of this.responses) {
            if (this.responses.size <= this.limits.maxResponses && this.bytes <= this.limits.maxBytes)
                break;
            this.responses.delete(id);
            this.bytes -= stored.bytes;
        }
    }

    get(id: string, owner: string | null): StoredResponse | undefined {
        const stored = this.responses.get(id);
        return stored != null && stored.owner === owner ? stored : undefined;
    }

    delete(id: string, owner: string | null): boolean {
        const stored = this.get(id, owner);
        if (stored == null)
            return false;
        this.responses.delete(id);
        this.bytes -= stored.bytes;
        return true;
    }

    /**
     * The conversation a continuation of `stored` starts from: its history, its input and its output (output items are
     * input items, with their reasoning text, namespaces and custom tool inputs).
     */
    static conversationOf(stored: StoredResponse): InputItem[] {
        return [...stored.history, ...stored.input, ...stored.response.output];
    }
}
