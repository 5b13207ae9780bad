/**
 * k-diffusion `get_ancestral_step`: the sigma to step down to deterministically and the amount of fresh noise to add
 * so that the result sits at `sigmaTo` (eta = 1: a full ancestral step; eta = 0: none).
 */
export function getAncestralStep(sigmaFrom: number, sigmaTo: number, eta = 1): {sigmaDown: number, sigmaUp: number} {
    if (!eta)
        return {sigmaDown: sigmaTo, sigmaUp: 0};
    const sigmaUp = Math.min(sigmaTo, eta * Math.sqrt(sigmaTo ** 2 * (sigmaFrom ** 2 - sigmaTo ** 2) / sigmaFrom ** 2));
    const sigmaDown = Math.sqrt(sigmaTo ** 2 - sigmaUp ** 2);
    return {sigmaDown, sigmaUp};
}
