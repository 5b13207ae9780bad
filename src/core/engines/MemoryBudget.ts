import type { Clock } from "./Clock.js";
import { chooseEvictions } from "./chooseEvictions.js";
import { EngineDisposedError } from "./EngineDisposedError.js";
import { formatBytes, memoryBusy, modelTooLarge } from "./libraryErrors.js";
import { memoryDevices, noMemory, type MemoryDevice, type MemoryEstimate } from "./MemoryEstimate.js";
import type { ModelSlot } from "./ModelSlot.js";

/** While a load waits for memory, engines' own load (which has no event) is looked at this often. */
export const busyPollMs = 1000;
/** Retry-After of a 503 for memory held by busy models. */
const memoryRetryAfterSeconds = 5;

/**
 * The VRAM budget: bytes, or how to learn them (the GPU's size, asked for only once a model needs VRAM: a server whose
 * models all run on the CPU never asks the GPU runtime).
 */
export type VramBudget = number | (() => Promise<number>);

/**
 * The library's byte budget, per device (RAM, and a GPU's VRAM): what the models hold of it (each its estimate, from
 * the start of its load to the end of its unload), and the room a load makes by evicting idle models that hold memory
 * on the device it lacks, least recently used first (never a pinned one, never one a request holds or waits for), or
 * waits for, up to `waitMs`.
 */
export class MemoryBudget {
    private changeWaiters = new Set<() => void>();
    private vramBytes: number | null;
    private vramAsked: Promise<number> | null = null;

    constructor(
        /** Bytes of RAM every loaded model's estimate must fit in together. */
        readonly ramBytes: number,
        private readonly vram: VramBudget,
        private readonly slots: () => Iterable<ModelSlot>,
        private readonly clock: Clock,
        private readonly waitMs: number
    ) {
        this.vramBytes = typeof vram === "number" ? vram : null;
    }

    /** The VRAM budget; null while not known yet (no model has needed VRAM). */
    get vramBudget(): number | null {
        return this.vramBytes;
    }

    /** Bytes of the budget held by models loaded, loading or being unloaded, per device. */
    inUse(): MemoryEstimate {
        const bytes = {...noMemory};
        for (const slot of this.slots())
            for (const device of memoryDevices)
                bytes[device] += slot.reserved[device];
        return bytes;
    }

    /** Per model holding memory: the bytes of the budget it holds (its estimate), per device. */
    byModel(): ReadonlyMap<string, MemoryEstimate> {
        return new Map([...this.slots()].filter((slot) => slot.reserved.ram > 0 || slot.reserved.vram > 0).map((slot) => [slot.entry.id, slot.reserved]));
    }

    /** The budget per device for a model that needs `needs` (the VRAM budget is learnt when a model first needs VRAM). */
    async budgetFor(needs: MemoryEstimate): Promise<MemoryEstimate> {
        if (needs.vram > 0 && this.vramBytes == null && typeof this.vram === "function")
            this.vramBytes = await (this.vramAsked ??= this.vram());
        return {ram: this.ramBytes, vram: this.vramBytes ?? 0};
    }

    /**
     * Learns the VRAM budget now, when it is to be asked for and not known yet: once asking costs nothing more (the GPU
     * runtime is loaded, for a GGUF model's estimate), so that one on the CPU says 0 rather than unknown. A failure to
     * ask leaves it unknown (a load that needs VRAM asks again).
     */
    async learnVram(): Promise<void> {
        if (this.vramBytes != null || typeof this.vram === "number")
            return;
        try {
            this.vramBytes = await (this.vramAsked ??= this.vram());
        } catch {
            this.vramAsked = null;
        }
    }

    /** The 503 for a model larger than a device's whole budget, or null when each device could hold it. */
    async tooLarge(id: string, needs: MemoryEstimate, hint?: string) {
        const budget = await this.budgetFor(needs);
        const device = memoryDevices.find((candidate) => needs[candidate] > budget[candidate]);
        return device == null ? null : modelTooLarge(id, device, needs[device], budget[device], hint);
    }

    /**
     * Holds `needs` of the budget for the model, evicting idle models (least recently used first, those holding memory
     * on a device it lacks) when they free enough; otherwise waits for models to become idle, at most `waitMs`, then
     * 503 naming the device it lacks and the models holding it. At once when evicting every model that could ever be
     * evicted for it would not free enough (the rest is pinned): no wait helps. `byPreload`: the preload's load (at
     * start, or a preloaded model's retry), which evicts no other preloaded model.
     */
    async reserve(slot: ModelSlot, needs: MemoryEstimate, disposed: () => boolean, byPreload = false) {
        const budget = await this.budgetFor(needs);
        const deadline = this.clock.now() + this.waitMs;
        const kept = (other: ModelSlot) => other !== slot && keptFor(other, byPreload);
        for (;;) {
            if (disposed())
                throw new EngineDisposedError(slot.entry.id);
            const used = this.inUse();
            const free = {ram: budget.ram - used.ram, vram: budget.vram - used.vram};
            const lacking = memoryDevices.find((device) => needs[device] > free[device]);
            if (lacking == null) {
                slot.reserved = needs;
                return;
            }
            const victims = chooseEvictions(needs, free, this.evictionOrder(kept));
            if (victims != null) {
                await Promise.all(victims.map((victim) => victim.unload("memory", slot.entry.id)));
                continue;
            }
            const never = this.neverFrees(needs, free, kept);
            const now = this.clock.now();
            if (never != null || now >= deadline) {
                const device = never ?? lacking;
                throw memoryBusy(slot.entry.id, device, needs[device], free[device], budget[device], this.holders(device, kept), memoryRetryAfterSeconds, never != null);
            }
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

    /** Models that may be evicted now (idle, not kept), least recently used first. */
    private evictionOrder(kept: (slot: ModelSlot) => boolean): ModelSlot[] {
        return [...this.slots()]
            .filter((slot) => !kept(slot) && slot.idle())
            .sort((a, b) => (a.lastUsed ?? 0) - (b.lastUsed ?? 0));
    }

    /**
     * The device still short of room for `needs` if every model that could ever be evicted for it went (all but the
     * kept ones; one being unloaded is leaving, kept or not), or null when waiting for busy ones may make room.
     */
    private neverFrees(needs: MemoryEstimate, free: MemoryEstimate, kept: (slot: ModelSlot) => boolean): MemoryDevice | null {
        const room = {...free};
        for (const slot of this.slots())
            if (slot.state === "unloading" || !kept(slot))
                for (const device of memoryDevices)
                    room[device] += slot.reserved[device];
        return memoryDevices.find((device) => needs[device] > room[device]) ?? null;
    }

    /** The models holding memory on a device, and why each stays (for the 503 of a load that found no room). */
    private holders(device: MemoryDevice, kept: (slot: ModelSlot) => boolean): string[] {
        return [...this.slots()].filter((slot) => slot.reserved[device] > 0)
            .map((slot) => `'${slot.entry.id}' (${formatBytes(slot.reserved[device])}, ${kept(slot) && !slot.pinned && slot.state !== "unloading" ? "preloaded" : slot.whyHeld()})`);
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

/** A model never evicted for a load: a pinned one; for the preload's load, a preloaded one too. */
function keptFor(slot: ModelSlot, byPreload: boolean): boolean {
    return slot.pinned || (byPreload && slot.preload);
}
