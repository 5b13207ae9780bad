/** The audio formats the encoders write: OpenAI's `response_format` values (speech; mp3 is its default there). */
export const audioFormats = ["mp3", "opus", "aac", "flac", "wav", "pcm"] as const;

export type AudioFormat = typeof audioFormats[number];
