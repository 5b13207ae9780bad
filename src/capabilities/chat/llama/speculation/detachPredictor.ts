import type { LlamaContextSequence } from "node-llama-cpp";

type SequenceInternals = {_tokenPredictor?: unknown};

/**
 * Takes a sequence's token predictor off it until the returned function puts it back. node-llama-cpp fixes a
 * sequence's predictor when the sequence is made, and with one it generates through its speculative loop even
 * when nothing is drafted, which costs a few percent per token on a model whose step takes under a
 * millisecond: a generation that will not draft (penalties, or a model too small for drafts to pay) runs
 * without it. Only this internal field is touched; a node-llama-cpp without it fails loudly here.
 */
export function detachPredictor(sequence: LlamaContextSequence): () => void {
    const internals = sequence as unknown as SequenceInternals;
    if (!("_tokenPredictor" in internals) || internals._tokenPredictor == null)
        throw new Error("This node-llama-cpp version's sequences keep no _tokenPredictor; speculative decoding needs updating.");
    const predictor = internals._tokenPredictor;
    internals._tokenPredictor = undefined;
    return () => {
        internals._tokenPredictor = predictor;
    };
}
