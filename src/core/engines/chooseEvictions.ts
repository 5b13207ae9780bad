import { memoryDevices, type MemoryEstimate } from "./MemoryEstimate.js";

/**
 * The models to evict so that `needs` fits: from `candidates` (idle, unpinned, least recently used first) those that
 * hold memory on a device still short of room, in that order, until every device has room; null when evicting all
 * of them would not make room. A model that holds nothing on the devices a load lacks is never evicted for it (a
 * load short of VRAM does not unload a CPU-only model).
 */
export function chooseEvictions<T extends {reserved: MemoryEstimate}>(needs: MemoryEstimate, free: MemoryEstimate, candidates: Iterable<T>): T[] | null {
    const room = {...free};
    const short = () => memoryDevices.filter((device) => needs[device] > room[device]);
    const victims: T[] = [];
    for (const candidate of candidates) {
        const lacking = short();
        if (lacking.length === 0)
            break;
        if (!lacking.some((device) => candidate.reserved[device] > 0))
            continue;
        victims.push(candidate);
        for (const device of memoryDevices)
            room[device] += candidate.reserved[device];
    }
    return short().length === 0 ? victims : null;
}
