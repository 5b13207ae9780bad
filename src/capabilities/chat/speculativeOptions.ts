import type { ChatServerConfig } from "./chatServerSettings.js";
import type { ChatSettings } from "./chatManifest.js";
import type { SpeculativeSettings } from "./SpeculativeSettings.js";

/**
 * A chat model's speculative decoding: its manifest entry's setting, else the server's. `--speculative draft`
 * means a draft model where the entry names one and prompt lookup elsewhere (a server-wide flag cannot give
 * every model a draft model).
 */
export function speculativeOptions(settings: ChatSettings, config: Pick<ChatServerConfig, "speculative" | "draftMax" | "draftPMin">): SpeculativeSettings {
    const wanted = settings.speculative ?? config.speculative;
    const mode = wanted === "draft" && settings.draftModel == null ? "lookup" : wanted;
    return {
        mode,
        draftMax: settings.draftMax ?? config.draftMax,
        ...(mode === "draft" ? {draftModelPath: settings.draftModel!, draftPMin: settings.draftPMin ?? config.draftPMin} : {})
    };
}
