/** A voice the model does not have (toSpeechJob resolves names first; an engine called directly can still meet one). */
export class UnknownVoiceError extends Error {
    constructor(readonly voice: string, readonly modelId: string, readonly voices: readonly string[]) {
        super(`Unknown voice '${voice}' for model '${modelId}'. Valid voices: ${voices.join(", ")}.`);
        this.name = "UnknownVoiceError";
    }
}
