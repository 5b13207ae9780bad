import type { SpeechEngine } from "./SpeechEngine.js";
import type { VoicesResponse } from "./SpeechWire.js";

/** Every own voice of the model, with the aliases that lead to it (sorted), in the model's order. */
export function toVoicesResponse(model: string, engine: Pick<SpeechEngine, "voices" | "voiceAliases" | "defaultVoice" | "sampleRate">): VoicesResponse {
    return {
        object: "list",
        model,
        default: engine.defaultVoice,
        sample_rate: engine.sampleRate,
        data: engine.voices.map((voice) => ({
            id: voice,
            object: "voice",
            aliases: Object.entries(engine.voiceAliases).filter(([, target]) => target === voice).map(([alias]) => alias).sort()
        })),
        voices: [...engine.voices]
    };
}
