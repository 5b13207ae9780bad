/**
 * `torch.linspace(start, end, steps)` in float64 as torch's CPU kernel computes it: the first half counts up from
 * `start`, the second half down from `end`, so both ends are exact. The sampler vectors were made with it (betas,
 * k-diffusion's `get_sigmas` t grid and Karras ramp), and numpy's one-sided formula can differ in the last bit.
 */
export function torchLinspace(start: number, end: number, steps: number): Float64Array {
    const out = new Float64Array(steps);
    if (steps === 1) {
        out[0] = start;
        return out;
    }
    const step = (end - start) / (steps - 1);
    const halfway = Math.floor(steps / 2);
    for (let i = 0; i < steps; i++)
        out[i] = i < halfway ? start + step * i : end - step * (steps - i - 1);
    return out;
}
