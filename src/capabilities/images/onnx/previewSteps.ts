/**
 * The step (1-based) after which each of `previews` partial images is sent, spread evenly over `steps`:
 * partial k at ceil((k + 1) * steps / (previews + 1)), so 3 previews of 25 steps come after steps 7, 13 and 19
 * and the last preview is never the final step unless there are fewer steps than previews (then several share a step).
 */
export function previewSteps(previews: number, steps: number): number[] {
    return Array.from({length: previews}, (_, k) => Math.min(steps, Math.max(1, Math.ceil((k + 1) * steps / (previews + 1)))));
}
