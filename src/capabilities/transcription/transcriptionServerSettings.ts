import { integer } from "../../settings/settingKinds.js";

/** The server-wide settings of transcription (flags and environment variables). */
export const transcriptionServerSettings = {
    // 2 hours: 460 MB of 16 kHz samples, what a worker holds for one request at most.
    maxAudioSeconds: integer({
        flag: "max-audio-seconds", env: "MAX_AUDIO_SECONDS", arg: "<n>", default: 7200, min: 1, max: 86_400,
        help: "longest audio an upload may decode to (transcription; longer: 400)",
        docs: "longest audio an uploaded file may decode to (transcription): longer is a 400 naming `file`, refused from the header when it tells the length, else as soon as the decoded audio passes it. A worker holds 64 KB per second of it (2 hours: 460 MB). See [docs/security.md](security.md#audio-uploads)"
    })
};
