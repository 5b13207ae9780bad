/**
 * The default table from OpenAI's voice names to Kokoro-82M v1.0 voices (README "Speech"): the same
 * name where Kokoro has one (alloy, echo, fable, onyx, nova), else a Kokoro voice of the same
 * character (gender, accent). An alias is only offered when its voice file is in the model folder;
 * the manifest's `voices` overrides or extends it.
 */
export const kokoroVoiceAliases: Readonly<Record<string, string>> = {
    alloy: "af_alloy",
    ash: "am_adam",
    ballad: "bm_lewis",
    coral: "af_kore",
    echo: "am_echo",
    fable: "bm_fable",
    onyx: "am_onyx",
    nova: "af_nova",
    sage: "af_sarah",
    shimmer: "af_sky",
    verse: "am_michael",
    marin: "af_heart",
    cedar: "am_fenrir"
};
