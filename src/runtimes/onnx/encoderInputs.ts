import { Tensor } from "@huggingface/transformers";

/**
 * An encoder's inputs for a batch of token-id sequences (worker side): `input_ids` right-padded with `padId`,
 * `attention_mask` 1 over each sequence's own tokens, and `token_type_ids` (the segment of each token: a
 * cross-encoder's query 0 and document 1; none given = all 0). transformers.js feeds a session only the inputs it has.
 */
export function encoderInputs(sequences: readonly Int32Array[], padId: number, typeIds?: readonly Int32Array[]): Record<string, Tensor> {
    const batch = sequences.length;
    const width = Math.max(1, ...sequences.map((ids) => ids.length));
    const inputIds = new BigInt64Array(batch * width).fill(BigInt(padId));
    const mask = new BigInt64Array(batch * width);
    const types = new BigInt64Array(batch * width);
    sequences.forEach((ids, b) => {
        for (let s = 0; s < ids.length; s++) {
            inputIds[b * width + s] = BigInt(ids[s]);
            mask[b * width + s] = 1n;
            types[b * width + s] = BigInt(typeIds?.[b][s] ?? 0);
        }
    });
    const dims = [batch, width];
    return {
        input_ids: new Tensor("int64", inputIds, dims),
        attention_mask: new Tensor("int64", mask, dims),
        token_type_ids: new Tensor("int64", types, dims)
    };
}
