/**
 * Polls until `check` passes, a bounded number of times. Only for states that are stable once
 * reached (a request held at a gate, a drained queue): the wait is for the server to get there,
 * never a race between the server and a timer.
 */
export async function eventually(check: () => Promise<boolean> | boolean, tries = 500, delayMs = 10) {
    for (let attempt = 0; attempt < tries; attempt++) {
        if (await check())
            return true;
        await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
    return false;
}
