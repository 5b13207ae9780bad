import type { SpeechSettings } from "../speechManifest.js";
import { kokoroVoiceAliases } from "./kokoroVoiceAliases.js";
import { openAiVoiceNames } from "./openAiVoiceNames.js";
import type { SpeechModelDescription } from "./speechWorkerProtocol.js";

/**
 * A speech model's aliases and default voice, from what the worker found in the folder and the
 * manifest entry: Kokoro gets the documented OpenAI-name table (only names whose voice exists), a
 * one-speaker model maps every OpenAI name to its voice; the manifest's `voices` go over those.
 * Default: the manifest's `defaultVoice` (a voice or alias), else the model's own (Kokoro af_heart
 * when present, else its first voice). A manifest value naming no voice of the model throws,
 * naming the model and the field.
 */
export function resolveVoices(modelId: string, described: SpeechModelDescription, settings: SpeechSettings) {
    const voices = new Set(described.voices);
    const aliases: Record<string, string> = {};
    if (described.modelType === "kokoro") {
        for (const [alias, voice] of Object.entries(kokoroVoiceAliases))
            if (voices.has(voice))
                aliases[alias] = voice;
    } else if (described.voices.length === 1) {
        for (const alias of openAiVoiceNames)
            aliases[alias] = described.voices[0];
    }
    for (const [alias, voice] of Object.entries(settings.voices)) {
        if (!voices.has(voice))
            throw new Error(`Model '${modelId}': manifest field 'voices.${alias}' names voice '${voice}', which the model does not have (it has ${described.voices.join(", ")}).`);
        aliases[alias] = voice;
    }
    let defaultVoice = described.defaultVoice;
    if (settings.defaultVoice != null) {
        const voice = voices.has(settings.defaultVoice) ? settings.defaultVoice : aliases[settings.defaultVoice];
        if (voice == null)
            throw new Error(`Model '${modelId}': manifest field 'defaultVoice' is '${settings.defaultVoice}', which is not one of the model's voices (${described.voices.join(", ")}) nor an alias.`);
        defaultVoice = voice;
    }
    return {voiceAliases: aliases as Readonly<Record<string, string>>, defaultVoice};
}
