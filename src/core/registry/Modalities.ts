import type { ModelEntry } from "./ModelEntry.js";

/**
 * What a model takes in and gives out, in OpenRouter's words (`architecture.input_modalities` / `output_modalities` of
 * its `/v1/models`: `text`, `image`, `audio`, ...), which clients read to tell a model that sees.
 */
export type Modalities = {input: readonly string[], output: readonly string[]};

/** A capability's modalities of one of its models (a chat model may or may not take images). */
export type ModalitiesOf = (entry: ModelEntry) => Modalities;
