/** log(Σ exp(value)) of a row of logits, without overflow: the log of a softmax's denominator (a log-softmax is each value minus it). */
export function logSumExp(values: Float32Array): number {
    let max = -Infinity;
    for (const value of values)
        if (value > max) max = value;
    let sum = 0;
    for (const value of values)
        sum += Math.exp(value - max);
    return Math.log(sum) + max;
}
