import type { Clock } from "./Clock.js";
import { EngineDisposedError } from "./EngineDisposedError.js";
import { formatBytes, memoryBusy } from "./libraryErrors.js";
import type { ModelSlot } from "./ModelSlot.js";

/** While a load waits for memory, engines' own load (which has no event) is looked at this often. */
export const busyPollMs = 1000;
/** Retry-After of a 503 for memory held by busy models. */
const memoryRetryAfterSeconds = 5;

/**
 * The library's byte budget: what the models hold of it (each its estimate, from the start of its load to the end of
 * its unload), and the room a load makes by evicting idle models, least recently used first (never a pinned one,
 * never one a request holds or waits for), or waits for, up to `waitMs`.
 */
export class MemoryBudget {
    private changeWaiters = new Set<() => void>();

    constructor(
        /** Bytes every loaded model's estimate must fit in together. */
        readonly bytes: number,
        private readonly slots: () => Iterable<ModelSlot>,
        private readonly clock: Clock,
        private readonly waitMs: number
    ) {}

    /** Bytes of the budget held by models loaded, loading or being unloaded. */
    inUse(): number {
        let bytes = 0;
        for (const slot of this.slots())
            bytes += slot.reservedBytes;
        return bytes;
    }

    /** Per model holding memory: the bytes of the budget it holds (its estimate). */
    byModel(): ReadonlyMap<string, number> {
        return new Map([...this.slots()].filter((slot) => slot.reservedBytes > 0).map((slot) => [slot.entry.id, slot.reservedBytes]));
    }

    /**
     * Holds `bytes` of the budget for the model, evicting idle models (least recently used first) when they
     * free enough; otherwise waits for models to become idle, at most `waitMs`, then 503 naming the holders.
     */
    async reserve(slot: ModelSlot, bytes: number, disposed: () => boolean) {
        const deadline = this.clock.now() + this.waitMs;
        for (;;) {
            if (disposed())
                throw new EngineDisposedError(slot.entry.id);
            const free = this.bytes - this.inUse();
            if (bytes <= free) {
                slot.reservedBytes = bytes;
                return;
            }
            const victims: ModelSlot[] = [];
            let freed = 0;
            for (const candidate of this.evictionOrder()) {
                if (free + freed >= bytes)
                    break;
                victims.push(candidate);
                freed += candidate.reservedBytes;
            }
            if (free + freed >= bytes) {
                await Promise.all(victims.map((victim) => victim.unload("memory", slot.entry.id)));
                continue;
            }
            const now = this.clock.now();
            if (now >= deadline)
                throw memoryBusy(slot.entry.id, bytes, free, this.bytes, this.holders(), memoryRetryAfterSeconds);
            await this.nextChange(Math.min(deadline - now, busyPollMs));
        }
    }

    /** Something that frees memory or a model happened: a load or unload ended, a request let go of a model. */
    notifyChange() {
        const waiters = this.changeWaiters;
        this.changeWaiters = new Set();
        for (const wake of waiters)
            wake();
    }

    /** Models that may be evicted now, least recently used first. */
    private evictionOrder(): ModelSlot[] {
        return [...this.slots()]
            .filter((slot) => !slot.pinned && slot.idle())
            .sort((a, b) => (a.lastUsed ?? 0) - (b.lastUsed ?? 0));
    }

    /** The models holding memory, and why each cannot go (for the 503 of a load that found no room). */
    private holders(): string[] {
        return [...this.slots()].filter((slot) => slot.reservedBytes > 0)
            .map((slot) => `'${slot.entry.id}' (${formatBytes(slot.reservedBytes)}, ${slot.whyHeld()})`);
    }

    /** Resolves at the next change (see notifyChange) or after `ms`. */
    private nextChange(ms: number): Promise<void> {
        return new Promise<void>((resolve) => {
            const cancel = this.clock.setTimer(ms, wake);
            function wake() {
                cancel();
                resolve();
            }
            this.changeWaiters.add(wake);
        });
    }
}
