/**
 * How a capability knows its own models, from what the model's files (or the hub) say about them: what
 * `npm start -- <paths>` and `npm run download-models -- <owner/repo>` read to give a model its task.
 * Every field is optional; a capability with none is only ever named by a manifest.
 *
 * The facts are asked from the most specific to the least (see `recogniseModel.ts`): a folder's marker file,
 * then `config.json` `architectures`, then its `model_type`; a GGUF's pooling type, then its
 * `general.architecture`, then `anyOtherGguf`; a hub repository's `pipeline_tag`. The first fact some
 * capability claims decides; two capabilities claiming the same fact is an error naming both.
 */
export type ModelRecognition = {
    /** A folder holding one of these files is one of its models (images: a diffusers `model_index.json`). */
    folderFiles?: readonly string[];
    /** `config.json` `architectures` entries (e.g. `WhisperForConditionalGeneration`). */
    architectures?: readonly string[];
    /** `config.json` `model_type`s (e.g. `bert`): taken only when no capability claims the model's architecture and it is no kind `unservedModels.ts` names. */
    modelTypes?: readonly string[];
    /** GGUF `<architecture>.pooling_type` values (llama.cpp's: 1 mean, 2 cls, 3 last, 4 rank). */
    ggufPoolingTypes?: readonly number[];
    /** GGUF `general.architecture`s (e.g. `nomic-bert`). */
    ggufArchitectures?: readonly string[];
    /** Every GGUF no capability claims by the facts above (chat: any causal language model). */
    anyOtherGguf?: boolean;
    /** Hub `pipeline_tag`s (e.g. `feature-extraction`); an untagged GGUF repository goes to `anyOtherGguf`. */
    pipelineTags?: readonly string[];
};
