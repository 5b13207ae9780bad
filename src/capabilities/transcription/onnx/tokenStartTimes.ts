/**
 * When each generated token starts, from transformers.js's `token_timestamps` (one value per position of the
 * whole sequence: zeros for the `initLength` prompt positions, then the DTW jump time of each later row, the
 * last one repeated). The cross-attention row at a position is the one that *predicts the next token*, so the
 * value at position p is when token p+1 starts (OpenAI's timing.py keeps the row of the last prompt token for
 * the first generated token; Hugging Face fixed its reading the same way, transformers PR #36632). Sliced from
 * the last prompt position, entry i is when generated token i starts (entry 0, always a timestamp token: 0),
 * and entry n, when the token after the last one starts.
 */
export function tokenStartTimes(tokenTimestamps: readonly number[], initLength: number): number[] {
    return tokenTimestamps.slice(Math.max(0, initLength - 1));
}
