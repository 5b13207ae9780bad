/** OpenAI's voice names for /v1/audio/speech (tts-1, tts-1-hd, gpt-4o-mini-tts). */
export const openAiVoiceNames = ["alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse", "marin", "cedar"] as const;
