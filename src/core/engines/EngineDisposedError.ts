/** A request reached an engine that is shutting down; answered 503. */
export class EngineDisposedError extends Error {
    constructor(modelId: string) {
        super(`Model '${modelId}' is shutting down.`);
        this.name = "EngineDisposedError";
    }
}
