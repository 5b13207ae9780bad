/** The kinds of work this process sends to its helper threads rather than doing on the main thread. */
export type OffThreadWork = "json-parse" | "prompt-render";

type Hold = {work: OffThreadWork, arrivals: number, arrived: Array<() => void>, released: Promise<void>, release: () => void};

let hold: Hold | null = null;

/**
 * Passed by each piece of work on its way to a helper thread (the JSON parse thread, a prompt render thread). Free
 * unless a test holds that kind of work (holdOffThreadWork): then it waits there, so the test can show, by order and
 * not by time, that the server answers other requests while this work is off the main thread.
 */
export function passOffThreadGate(work: OffThreadWork): Promise<void> | undefined {
    if (hold == null || hold.work !== work)
        return undefined;
    hold.arrivals++;
    for (const resolve of hold.arrived.splice(0))
        resolve();
    return hold.released;
}

/**
 * Holds every piece of `work` at its gate until `release()` (tests only). `arrived()` resolves once a piece has
 * reached the gate (at once if one already has).
 */
export function holdOffThreadWork(work: OffThreadWork): {arrived(): Promise<void>, release(): void} {
    if (hold != null)
        throw new Error(`Off-thread work is already held (${hold.work})`);
    let release!: () => void;
    const released = new Promise<void>((resolve) => release = resolve);
    const current: Hold = {work, arrivals: 0, arrived: [], released, release};
    hold = current;
    return {
        arrived: () => current.arrivals > 0 ? Promise.resolve() : new Promise((resolve) => current.arrived.push(resolve)),
        release() {
            if (hold === current)
                hold = null;
            current.release();
        }
    };
}
