/** OpenAI's `response_format` values for `/v1/audio/speech`; `mp3` is its default. */
export const speechFormats = ["mp3", "opus", "aac", "flac", "wav", "pcm"] as const;

export type SpeechFormat = typeof speechFormats[number];
