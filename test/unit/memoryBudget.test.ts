import { describe, expect, it } from "vitest";
import { chooseEvictions } from "../../src/core/engines/chooseEvictions.js";
import { ApiError } from "../../src/core/http/ApiError.js";
import { MemoryBudget } from "../../src/core/engines/MemoryBudget.js";
import { MemoryBusyError } from "../../src/core/engines/MemoryBusyError.js";
import type { MemoryEstimate } from "../../src/core/engines/MemoryEstimate.js";
import type { ModelSlot } from "../../src/core/engines/ModelSlot.js";
import { ManualClock } from "../support/ManualClock.js";

/**
 * The library's budget over two devices, RAM and a GPU's VRAM, with slots made up for it: which idle models a load
 * evicts (least recently used first, only those holding memory on a device it lacks), and the 503s naming the device.
 */
const mb = 1024 ** 2;
const bytes = (ram: number, vram = 0): MemoryEstimate => ({ram: ram * mb, vram: vram * mb});

type FakeSlot = {entry: {id: string}, reserved: MemoryEstimate, pinned: boolean, preload: boolean, lastUsed: number, busy: boolean, unloads: string[]};

/** A loaded model as MemoryBudget sees one: what it holds, whether it may go, and an unload that gives its memory back. */
function slot(id: string, reserved: MemoryEstimate, lastUsed: number, extra: Partial<FakeSlot> = {}): FakeSlot & ModelSlot {
    const fake = {
        entry: {id}, reserved, pinned: false, preload: false, lastUsed, busy: false, unloads: [] as string[], ...extra,
        idle() {
            return !fake.busy;
        },
        whyHeld() {
            return fake.pinned ? "pinned" : fake.busy ? "busy: 1 request running or waiting" : "idle";
        },
        async unload(reason: string, forModel?: string) {
            fake.unloads.push(`${reason} for ${forModel}`);
            fake.reserved = bytes(0);
        }
    };
    return fake as unknown as FakeSlot & ModelSlot;
}

/** The 503 a reservation ends with: `model_memory_busy`, Retry-After 5 s (the test fails when it fits). */
async function refusalOf(budget: MemoryBudget, incoming: ModelSlot, needs: MemoryEstimate, byPreload = false): Promise<MemoryBusyError> {
    const error = await budget.reserve(incoming, needs, () => false, byPreload).then(() => null, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(MemoryBusyError);
    expect(error).toMatchObject({status: 503, code: "model_memory_busy", headers: {"Retry-After": "5"}});
    return error as MemoryBusyError;
}

function budgetOf(ram: number, vram: number | (() => Promise<number>), slots: ModelSlot[], waitMs = 0) {
    return new MemoryBudget(ram * mb, typeof vram === "number" ? vram * mb : vram, () => slots, new ManualClock(), waitMs);
}

describe("chooseEvictions", () => {
    const a = {id: "a", reserved: bytes(100, 0)};
    const b = {id: "b", reserved: bytes(100, 500)};
    const c = {id: "c", reserved: bytes(50, 300)};

    it("takes nothing when the load fits", () => {
        expect(chooseEvictions(bytes(10, 10), bytes(10, 10), [a, b, c])).toEqual([]);
    });

    it("short of VRAM: skips the least recently used model that holds none, takes those that do, in LRU order, until it fits", () => {
        expect(chooseEvictions(bytes(10, 400), bytes(500, 100), [a, b, c])?.map((x) => x.id)).toEqual(["b"]);
        expect(chooseEvictions(bytes(10, 700), bytes(500, 100), [a, b, c])?.map((x) => x.id)).toEqual(["b", "c"]);
    });

    it("short of RAM only: evicts the least recently used first, a GPU model too (it holds RAM)", () => {
        expect(chooseEvictions(bytes(150, 0), bytes(100, 0), [a, b, c])?.map((x) => x.id)).toEqual(["a"]);
        expect(chooseEvictions(bytes(250, 0), bytes(100, 0), [a, b, c])?.map((x) => x.id)).toEqual(["a", "b"]);
    });

    it("short of both: evicts until both fit", () => {
        expect(chooseEvictions(bytes(190, 200), bytes(0, 0), [a, b, c])?.map((x) => x.id)).toEqual(["a", "b"]);
    });

    it("null when evicting every candidate would not make room", () => {
        expect(chooseEvictions(bytes(10, 900), bytes(500, 0), [a, b, c])).toBeNull();
        expect(chooseEvictions(bytes(300, 0), bytes(0, 0), [a, b, c])).toBeNull();
    });
});

describe("MemoryBudget over RAM and VRAM", () => {
    it("holds each device's bytes; in use and by model per device", async () => {
        const loaded = slot("gpu", bytes(100, 600), 1);
        const next = slot("next", bytes(0), 2);
        const budget = budgetOf(1000, 1000, [loaded, next]);
        await budget.reserve(next, bytes(200, 300), () => false);
        expect(next.reserved).toEqual(bytes(200, 300));
        expect(budget.inUse()).toEqual(bytes(300, 900));
        expect(budget.byModel()).toEqual(new Map([["gpu", bytes(100, 600)], ["next", bytes(200, 300)]]));
        expect(loaded.unloads).toEqual([]);
    });

    it("a load short of VRAM evicts the least recently used idle model holding VRAM, not a CPU-only one older still", async () => {
        const cpuOnly = slot("cpu-only", bytes(300, 0), 1);
        const olderGpu = slot("old-gpu", bytes(100, 500), 2);
        const newerGpu = slot("new-gpu", bytes(100, 400), 3);
        const incoming = slot("incoming", bytes(0), 4);
        const budget = budgetOf(2000, 1000, [cpuOnly, olderGpu, newerGpu, incoming]);
        await budget.reserve(incoming, bytes(100, 300), () => false);
        expect([cpuOnly.unloads, olderGpu.unloads, newerGpu.unloads]).toEqual([[], ["memory for incoming"], []]);
        expect(budget.inUse()).toEqual(bytes(500, 700));
    });

    it.each([
        {
            when: "past the wait (busy models may yet free it), 503 naming VRAM, what it needs, what is free, and the holders",
            held: {busy: bytes(100, 500), pinned: bytes(100, 400)}, budget: [2000, 1000], waitMs: 0, needs: bytes(100, 300),
            message: "Model 'incoming' needs about 300 MB of GPU memory (VRAM); 100 MB of the 1000 MB VRAM budget is free, " +
                "and the rest is held by 'busy' (500 MB, busy: 1 request running or waiting), 'pinned' (400 MB, pinned). Retry later."
        },
        {
            // A 30 s wait on a clock that never moves: only an answer at once settles.
            when: "at once, without waiting, when evicting every model that ever could would not free enough (the rest is pinned)",
            held: {busy: bytes(200), pinned: bytes(600)}, budget: [1000, 0], waitMs: 30_000, needs: bytes(500),
            message: "Model 'incoming' needs about 500 MB of memory; 200 MB of the 1000 MB budget is free, and the rest is held by " +
                "'busy' (200 MB, busy: 1 request running or waiting), 'pinned' (600 MB, pinned); evicting every model that may be evicted for it would not free enough. Retry later."
        }
    ])("never evicts a busy or pinned model; $when", async ({held, budget: [ram, vram], waitMs, needs, message}) => {
        const busy = slot("busy", held.busy, 1, {busy: true});
        const pinned = slot("pinned", held.pinned, 2, {pinned: true});
        const incoming = slot("incoming", bytes(0), 3);
        const error = await refusalOf(budgetOf(ram, vram, [busy, pinned, incoming], waitMs), incoming, needs);
        expect(error).toBeInstanceOf(ApiError);
        expect(error.message).toBe(message);
        expect([busy.unloads, pinned.unloads]).toEqual([[], []]);
    });

    it("the preload's load evicts no other preloaded model (it is answered at once instead); another load evicts an idle preloaded one", async () => {
        const warm = slot("warm", bytes(600), 1, {preload: true});
        const next = slot("next", bytes(0), 2, {preload: true});
        const budget = budgetOf(1000, 0, [warm, next], 30_000);
        expect((await refusalOf(budget, next, bytes(500), true)).shortfall).toBe("Model 'next' needs about 500 MB of memory; 400 MB of the 1000 MB budget is free, and the rest is held by " +
            "'warm' (600 MB, preloaded); evicting every model that may be evicted for it would not free enough.");
        expect(warm.unloads).toEqual([]);
        await budget.reserve(next, bytes(500), () => false);
        expect(warm.unloads).toEqual(["memory for next"]);
    });

    it("a model larger than a device's whole budget: the 503 names the device, its need and the budget", async () => {
        const budget = budgetOf(1000, 512, []);
        expect((await budget.tooLarge("big", bytes(100, 600)))?.message)
            .toBe("Model 'big' needs about 600 MB of GPU memory (VRAM), more than the server's whole VRAM budget of 512 MB (--vram-budget).");
        expect((await budget.tooLarge("big", bytes(2048, 0)))?.message)
            .toBe("Model 'big' needs about 2.00 GB of memory, more than the server's whole budget of 1000 MB (--memory-budget).");
        // A capability's sentence on what sizes its models' memory comes last.
        expect((await budget.tooLarge("big", bytes(2048, 0), "Its context takes most of it."))?.message).toBe(
            "Model 'big' needs about 2.00 GB of memory, more than the server's whole budget of 1000 MB (--memory-budget). Its context takes most of it.");
        expect(await budget.tooLarge("fits", bytes(1000, 512))).toBeNull();
    });

    it("without a GPU the VRAM budget is 0 and a CPU model fits it; `auto` asks for the GPU's size only once a model needs VRAM", async () => {
        let asked = 0;
        const budget = budgetOf(1000, async () => {
            asked++;
            return 800 * mb;
        }, []);
        expect(await budget.tooLarge("cpu", bytes(500, 0))).toBeNull();
        expect([asked, budget.vramBudget]).toEqual([0, null]);
        expect((await budget.tooLarge("gpu", bytes(100, 900)))?.message).toContain("whole VRAM budget of 800 MB");
        expect(await budget.tooLarge("gpu2", bytes(100, 700))).toBeNull();
        expect([asked, budget.vramBudget]).toEqual([1, 800 * mb]);
        const none = budgetOf(1000, 0, []);
        expect(await none.tooLarge("cpu", bytes(999, 0))).toBeNull();
    });

    it("`auto` is learnt without a model needing VRAM once asking costs nothing more (the GPU runtime loaded): 0 on the CPU", async () => {
        let asked = 0;
        const onCpu = budgetOf(1000, async () => {
            asked++;
            return 0;
        }, []);
        expect(onCpu.vramBudget).toBeNull();
        await onCpu.learnVram();
        await onCpu.learnVram();
        expect([asked, onCpu.vramBudget]).toEqual([1, 0]);
        // A runtime that fails to tell leaves it unknown; a later ask tries again.
        let attempts = 0;
        const failing = budgetOf(1000, async () => {
            if (++attempts === 1)
                throw new Error("no runtime");
            return 800 * mb;
        }, []);
        await failing.learnVram();
        expect(failing.vramBudget).toBeNull();
        await failing.learnVram();
        expect([attempts, failing.vramBudget]).toEqual([2, 800 * mb]);
    });
});
