/** The candidate nearest to `name` by edit distance (case-insensitive), when it is near enough to be a typo; else null. */
export function closestName(name: string, candidates: readonly string[]): string | null {
    const wanted = name.toLowerCase();
    if (wanted.length > 200)
        return null;
    let best: {candidate: string, distance: number} | null = null;
    for (const candidate of candidates) {
        const distance = editDistance(wanted, candidate.toLowerCase());
        if (best == null || distance < best.distance)
            best = {candidate, distance};
    }
    return best != null && best.distance <= Math.max(2, Math.floor(best.candidate.length / 3)) ? best.candidate : null;
}

function editDistance(a: string, b: string): number {
    let previous = Array.from({length: b.length + 1}, (_, index) => index);
    for (let i = 1; i <= a.length; i++) {
        const current = [i];
        for (let j = 1; j <= b.length; j++)
            current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
        previous = current;
    }
    return previous[b.length];
}
