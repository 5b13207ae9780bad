/** A kind of model that no capability serves yet, told apart from the models a capability does serve. */
export type UnservedKind = {
    /** What it is, as the refusal says it. */
    is: string;
    /** `config.json` `architectures` entries ending so. */
    architectureSuffixes?: readonly string[];
    /** GGUF `<architecture>.pooling_type` values. */
    ggufPoolingTypes?: readonly number[];
    /** GGUF `general.architecture`s. */
    ggufArchitectures?: readonly string[];
    /** Hub `pipeline_tag`s. */
    pipelineTags?: readonly string[];
};

/**
 * Models whose broader facts (a `model_type`, a GGUF architecture) a capability claims but that it cannot serve:
 * asked only when no capability claims the more specific fact, so a capability that serves them later takes them
 * without an edit here (as rerank took the cross-encoders' architectures, GGUF rank pooling and `text-ranking`).
 */
export const unservedModels: readonly UnservedKind[] = [{
    is: "a sequence classifier (a text classifier, whose architecture no reranker has), not an embedding model: no capability serves classification models yet",
    architectureSuffixes: ["ForSequenceClassification"],
    pipelineTags: ["text-classification"]
}, {
    is: "a multimodal projector (an mmproj file: the image encoder a vision chat model is served with), not a model of its own",
    // llama.cpp's mtmd projectors (mmproj-*.gguf beside a vision model's GGUF): general.architecture "clip".
    ggufArchitectures: ["clip"]
}];
