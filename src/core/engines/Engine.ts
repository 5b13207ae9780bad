import type { EngineLoad } from "./EngineLoad.js";

/** What the engine host needs of every loaded engine, whatever its capability. */
export interface Engine {
    load(): EngineLoad;
    /** Stops accepting requests, waits for the ones in flight, then frees the model. */
    dispose(): Promise<void>;
    /** Extra fields for the "Loaded" log line (dimensions, context size, sample rate...). */
    describe?(): Record<string, unknown>;
}
