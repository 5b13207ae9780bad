import type { Capability } from "./Capability.js";
import { chatCapability } from "./chat/chatCapability.js";
import { embeddingsCapability } from "./embeddings/embeddingsCapability.js";
import { imagesCapability } from "./images/imagesCapability.js";
import { speechCapability } from "./speech/speechCapability.js";
import { transcriptionCapability } from "./transcription/transcriptionCapability.js";

/** Everything the server does. A new capability is a folder beside these and one line here. */
export const capabilities: readonly Capability[] = [
    chatCapability as Capability,
    embeddingsCapability as Capability,
    imagesCapability as Capability,
    speechCapability as Capability,
    transcriptionCapability as Capability
];
