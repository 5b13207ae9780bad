import fs from "node:fs/promises";
import path from "node:path";
import type { LoadedSpeechModel } from "./LoadedSpeechModel.js";
import type { SpeechModelSpec } from "./speechWorkerProtocol.js";

/** config.json `model_type` of each engine: Kokoro's ONNX export says style_text_to_speech_2, MMS-TTS says vits. */
const kokoroTypes = new Set(["style_text_to_speech_2", "kokoro"]);
const vitsTypes = new Set(["vits"]);

/** Reads the folder's config.json and loads the engine its `model_type` names. */
export async function loadSpeechModel(spec: SpeechModelSpec): Promise<LoadedSpeechModel> {
    const configFile = path.join(spec.folder, "config.json");
    let config: Record<string, unknown>;
    try {
        config = JSON.parse(await fs.readFile(configFile, "utf8")) as Record<string, unknown>;
    } catch (error) {
        throw new Error(`Speech model folder ${spec.folder}: cannot read config.json (${(error as Error).message}).`);
    }
    const type = String(config.model_type ?? "");
    if (kokoroTypes.has(type)) {
        const {KokoroSpeechModel} = await import("./KokoroSpeechModel.js");
        return KokoroSpeechModel.load(spec);
    }
    if (vitsTypes.has(type)) {
        const {VitsSpeechModel} = await import("./VitsSpeechModel.js");
        return VitsSpeechModel.load(spec, config);
    }
    throw new Error(`Speech model folder ${spec.folder}: config.json model_type '${type}' is not a supported speech model (style_text_to_speech_2 = Kokoro, vits = VITS/MMS-TTS).`);
}
