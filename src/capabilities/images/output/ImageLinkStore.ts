import crypto from "node:crypto";

export type StoredImage = {bytes: Buffer, contentType: string, expiresAt: number};

export type ImageLinkStoreOptions = {
    /** Milliseconds since the epoch; injectable so tests of expiry need no sleeping. */
    now: () => number;
    /** How long a link works (OpenAI's: 60 minutes). */
    ttlMs: number;
    /** Memory the stored images may take; past it the oldest are dropped early. */
    maxBytes: number;
};

/**
 * Images answered with `response_format: "url"`, kept in memory under unguessable names (128 random
 * bits) for `ttlMs`, then deleted. Expired images are swept on every put and get, and by a timer so
 * an idle server frees them too.
 */
export class ImageLinkStore {
    // Insertion order = expiry order (every image lives ttlMs), so the oldest are first.
    private readonly images = new Map<string, StoredImage>();
    private bytes = 0;

    constructor(private readonly options: ImageLinkStoreOptions) {
        setInterval(() => this.sweep(), Math.min(options.ttlMs, 60_000)).unref();
    }

    /** Stores the image; returns its file name (`<32 hex>.<extension>`). */
    put(bytes: Buffer, extension: string, contentType: string): string {
        this.sweep();
        const name = `${crypto.randomBytes(16).toString("hex")}.${extension}`;
        this.images.set(name, {bytes, contentType, expiresAt: this.options.now() + this.options.ttlMs});
        this.bytes += bytes.length;
        for (const [oldest, image] of this.images) {
            if (this.bytes <= this.options.maxBytes || oldest === name)
                break;
            this.delete(oldest, image);
        }
        return name;
    }

    get(name: string): StoredImage | undefined {
        this.sweep();
        return this.images.get(name);
    }

    /** Images currently kept (tests, logs). */
    get size() {
        return this.images.size;
    }

    private sweep() {
        const now = this.options.now();
        for (const [name, image] of this.images) {
            if (image.expiresAt > now)
                break;
            this.delete(name, image);
        }
    }

    private delete(name: string, image: StoredImage) {
        this.images.delete(name);
        this.bytes -= image.bytes.length;
    }
}
